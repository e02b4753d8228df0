/// A grid of braille characters, each 2 dots wide and 4 dots high, for terminal plots.
struct BrailleCanvas: Sendable {
    let columns: Int
    let rows: Int
    private var cells: [UInt8]

    init(columns: Int, rows: Int) {
        self.columns = columns
        self.rows = rows
        cells = Array(repeating: 0, count: columns * rows)
    }

    /// Width and height in dots.
    var dotWidth: Int { columns * 2 }
    var dotHeight: Int { rows * 4 }

    /// Sets the dot at (`x`, `y`), `y` counted from the top; dots outside are ignored.
    mutating func set(_ x: Int, _ y: Int) {
        guard x >= 0, y >= 0, x < dotWidth, y < dotHeight else { return }
        let bits: [[UInt8]] = [[0x01, 0x02, 0x04, 0x40], [0x08, 0x10, 0x20, 0x80]]
        cells[(y / 4) * columns + x / 2] |= bits[x % 2][y % 4]
    }

    /// Draws a straight line between two dots (Bresenham).
    public mutating func line(_ x0: Int, _ y0: Int, _ x1: Int, _ y1: Int) {
        var (x, y) = (x0, y0)
        let dx = abs(x1 - x0), dy = -abs(y1 - y0)
        let sx = x0 < x1 ? 1 : -1, sy = y0 < y1 ? 1 : -1
        var err = dx + dy
        while true {
            set(x, y)
            if x == x1 && y == y1 { return }
            let e2 = 2 * err
            if e2 >= dy { err += dy; x += sx }
            if e2 <= dx { err += dx; y += sy }
        }
    }

    /// Whether any dot of the cell at (`column`, `row`) is set.
    func isSet(column: Int, row: Int) -> Bool { cells[row * columns + column] != 0 }

    /// The character of one cell (a blank braille pattern when empty).
    func character(column: Int, row: Int) -> Character {
        Character(Unicode.Scalar(0x2800 + UInt32(cells[row * columns + column]))!)
    }
}
