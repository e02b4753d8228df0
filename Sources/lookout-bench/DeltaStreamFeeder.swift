import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// P4's feeder: a separate `python3` process (standard library only) that serves the Signal K
/// stream from WebSocket frames encoded in advance, so the consumers measured in the bench
/// process do not share their process, or their time, with the server.
///
/// Control is a line protocol on the feeder's standard input, one connection at a time:
/// - `flood`: the next connection gets the hello and then every frame at once (`sendall`, so the
///   socket and the reader pace it);
/// - `paced W`: the next connection gets the hello, then nothing until a `p 0` line (the consumer
///   is registered), then frames never more than `W` ahead of the last `p N` line. A Lua consumer
///   reports `p N` itself through `bench_progress(n)`, a write on this pipe from the script's own
///   executor: no hop through the bench's tasks.
///
/// The feeder answers a client's close frame with one and waits for the next control line.
final class DeltaStreamFeeder: Sendable {
    /// The loopback port the feeder listens on.
    let port: Int
    /// The writing end of the feeder's standard input.
    private let control: Int32
    private let pid: pid_t
    private let directory: String

    /// The feeder script (python3, standard library only).
    static let source = #"""
        import array, base64, hashlib, os, select, socket, sys

        GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
        data = memoryview(open(sys.argv[1], "rb").read())
        offsets = array.array("Q")
        offsets.frombytes(open(sys.argv[2], "rb").read())
        hello = open(sys.argv[3], "rb").read()
        n = len(offsets) - 1
        pending, lines = b"", []

        def read_lines(block):
            global pending
            while not lines:
                if not block and not select.select([0], [], [], 0)[0]:
                    return
                chunk = os.read(0, 65536)
                if not chunk:
                    lines.append("quit")
                    return
                pending += chunk
                *done, pending = pending.split(b"\n")
                lines.extend(d.decode() for d in done)

        def handshake(conn):
            request = b""
            while b"\r\n\r\n" not in request:
                chunk = conn.recv(65536)
                if not chunk:
                    return False
                request += chunk
            key = b""
            for line in request.split(b"\r\n"):
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"sec-websocket-key":
                    key = value.strip()
            if not key:  # a plain HTTP request (signalk.connect reads /signalk/v1/api/self first)
                first = request.split(b"\r\n")[0]
                body = b'"vessels.urn:mrn:imo:mmsi:230099999"' if b"/signalk/v1/api/self" in first else b"{}"
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n"
                             b"Connection: close\r\n\r\n" % len(body) + body)
                return None
            accept = base64.b64encode(hashlib.sha1(key + GUID).digest())
            conn.sendall(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                         b"Sec-WebSocket-Accept: " + accept + b"\r\n\r\n" + hello)
            return True

        def client_frames(conn, buf):
            """Reads what the client sent; False once it closed (a close frame is answered)."""
            try:
                chunk = conn.recv(65536)
            except OSError:
                return False, b""
            if not chunk:
                return False, b""
            buf += chunk
            while len(buf) >= 2:
                opcode, length = buf[0] & 15, buf[1] & 127
                head = 2 + (2 if length == 126 else 8 if length == 127 else 0) + (4 if buf[1] & 128 else 0)
                if len(buf) < head:
                    break
                if length == 126:
                    length = int.from_bytes(buf[2:4], "big")
                elif length == 127:
                    length = int.from_bytes(buf[2:10], "big")
                if len(buf) < head + length:
                    break
                buf = buf[head + length:]
                if opcode == 8:
                    try:
                        conn.sendall(b"\x88\x02\x03\xe8")
                    except OSError:
                        pass
                    return False, b""
            return True, buf

        def serve(conn, window):
            shaken = handshake(conn)
            if shaken is None:
                return None  # answered a plain HTTP request: the stream's connection is still to come
            if not shaken:
                return 0
            sent, progress, buf, open_ = 0, (0 if window == 0 else -1), b"", True
            while open_:
                if progress >= 0 and sent < n:
                    upto = n if window == 0 else min(n, progress + window)
                    if upto > sent:
                        conn.sendall(data[offsets[sent]:offsets[upto]])
                        sent = upto
                ready = select.select([conn] + ([0] if window else []), [], [])[0]
                if conn in ready:
                    open_, buf = client_frames(conn, buf)
                if 0 in ready:
                    read_lines(False)
                    while lines and lines[0].startswith("p "):
                        progress = max(progress, int(lines.pop(0)[2:]))
                    if lines and lines[0] == "abort":
                        lines.pop(0)
                        break
            return sent

        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        print("port=%d" % listener.getsockname()[1], flush=True)
        while True:
            read_lines(True)
            line = lines.pop(0)
            if line == "quit":
                break
            if line.startswith("p ") or line == "abort":
                continue  # late progress of a connection that already ended
            window = 0 if line == "flood" else int(line.split()[1])
            sent = None
            while sent is None:
                conn, _ = listener.accept()
                conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                try:
                    sent = serve(conn, window)
                except OSError as e:
                    sent = -1
                    print("feeder: %s" % e, file=sys.stderr, flush=True)
                conn.close()
            print("served %d" % sent, flush=True)
        """#

    /// Encodes `frames` as unmasked WebSocket text frames, starts the feeder and waits for its port.
    /// - Throws: `BenchFailure` when python3 is missing or the feeder does not start.
    static func start(frames: [String], hello: String) throws -> DeltaStreamFeeder {
        guard let python3 = ProcessSpawner.which("python3") else { throw BenchFailure("P4 needs python3 for its feeder (not on PATH)") }
        signal(SIGPIPE, SIG_IGN)  // a feeder that died must not kill the bench through a progress write
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("lookout-bench-p4-feeder-\(getpid())").path
        try? FileManager.default.removeItem(atPath: directory)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var bytes: [UInt8] = []
        var offsets: [UInt64] = [0]
        bytes.reserveCapacity(frames.reduce(0) { $0 + $1.utf8.count + 4 })
        offsets.reserveCapacity(frames.count + 1)
        for f in frames {
            appendFrame(f, to: &bytes)
            offsets.append(UInt64(bytes.count).littleEndian)
        }
        var hi: [UInt8] = []
        appendFrame(hello, to: &hi)
        let files = [("frames.bin", Data(bytes)), ("offsets.bin", offsets.withUnsafeBytes { Data($0) }), ("hello.bin", Data(hi)),
                     ("feeder.py", Data(source.utf8))]
        for (name, contents) in files {
            guard FileManager.default.createFile(atPath: directory + "/" + name, contents: contents) else {
                throw BenchFailure("cannot write \(directory)/\(name)")
            }
        }

        var toChild: [Int32] = [0, 0], fromChild: [Int32] = [0, 0]
        guard pipe(&toChild) == 0, pipe(&fromChild) == 0 else { throw BenchFailure("pipe() failed") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, toChild[0], 0)
        posix_spawn_file_actions_adddup2(&actions, fromChild[1], 1)
        for fd in toChild + fromChild { posix_spawn_file_actions_addclose(&actions, fd) }
        let args = [python3, directory + "/feeder.py", directory + "/frames.bin", directory + "/offsets.bin", directory + "/hello.bin"]
        var argv: [UnsafeMutablePointer<CChar>?] = args.map { strdup($0) } + [nil]
        defer { for a in argv { free(a) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, python3, &actions, nil, argv, environ)
        close(toChild[0])
        close(fromChild[1])
        guard spawned == 0 else {
            close(toChild[1]); close(fromChild[0])
            throw BenchFailure("cannot start the P4 feeder (posix_spawn \(spawned))")
        }
        // The first line is `port=N`; later lines (`served N`) are read by `waitServed()`.
        var line: [UInt8] = []
        var c: UInt8 = 0
        while read(fromChild[0], &c, 1) == 1, c != 10 { line.append(c) }
        let text = String(decoding: line, as: UTF8.self)
        guard text.hasPrefix("port="), let port = Int(text.dropFirst(5)) else {
            close(toChild[1]); close(fromChild[0])
            kill(pid, SIGKILL)
            throw BenchFailure("the P4 feeder did not start: \(text.prefix(200))")
        }
        return DeltaStreamFeeder(port: port, control: toChild[1], output: fromChild[0], pid: pid, directory: directory)
    }

    private let output: Int32

    private init(port: Int, control: Int32, output: Int32, pid: pid_t, directory: String) {
        self.port = port
        self.control = control
        self.output = output
        self.pid = pid
        self.directory = directory
    }

    /// Appends `text` as one unmasked, final WebSocket text frame.
    static func appendFrame(_ text: String, to bytes: inout [UInt8]) {
        let payload = Array(text.utf8)
        bytes.append(0x81)
        if payload.count < 126 {
            bytes.append(UInt8(payload.count))
        } else if payload.count < 65536 {
            bytes.append(126)
            bytes.append(UInt8(payload.count >> 8))
            bytes.append(UInt8(payload.count & 0xff))
        } else {
            bytes.append(127)
            for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8((payload.count >> shift) & 0xff)) }
        }
        bytes.append(contentsOf: payload)
    }

    private func send(_ line: String) {
        let text = line + "\n"
        _ = text.withCString { write(control, $0, strlen($0)) }
    }

    /// The next connection gets every frame at once.
    func flood() { send("flood") }
    /// The next connection gets frames at most `window` ahead of the reported progress.
    func paced(window: Int) { send("paced \(window)") }
    /// The consumer has handled `count` deltas (0: it is registered). One small write on a pipe.
    func progress(_ count: Int) { send("p \(count)") }
    /// Ends the current connection.
    func abort() { send("abort") }

    /// Stops the feeder and removes its files.
    func stop() {
        send("quit")
        close(control)
        var status: Int32 = 0
        if waitpid(pid, &status, 0) != pid { kill(pid, SIGKILL) }
        close(output)
        try? FileManager.default.removeItem(atPath: directory)
    }
}
