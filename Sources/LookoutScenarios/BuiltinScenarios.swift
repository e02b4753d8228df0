/// The scenarios shipped in the binary (`lookout test --list`). Each is the text of a scenario
/// file, so `lookout test --show NAME` prints a starting point for your own.
///
/// Their expectations use the alert ids of the ready scripts (`urgent-low`, `stale`, `high`,
/// `not-looping`, `anchor-drag`); a script with other ids uses its own scenario file.
public enum BuiltinScenarios {
    /// Names, in the order `--list` shows them.
    public static let names = ["overnight-low", "compression-low", "sensor-gap", "post-meal-rise", "not-looping", "anchor-drag"]

    /// A scenario name in the one spelling Lookout shows: lower case words joined by dashes
    /// (`overnightLow`, `overnight_low` and `Overnight-Low` are all `overnight-low`).
    public static func canonicalName(_ name: String) -> String {
        var out = ""
        for character in name {
            if character.isUppercase, let last = out.last, last != "-" { out.append("-") }
            out.append(character == "_" || character == " " ? "-" : Character(character.lowercased()))
        }
        return out
    }

    /// The source of a built-in scenario (any spelling of its name, see `canonicalName`).
    public static func source(named name: String) -> String? {
        switch canonicalName(name) {
        case "overnight-low": return overnightLow
        case "compression-low": return compressionLow
        case "sensor-gap": return sensorGap
        case "post-meal-rise": return postMealRise
        case "not-looping": return notLooping
        case "anchor-drag": return anchorDrag
        default: return nil
        }
    }

    static let overnightLow = """
        -- A slow slide after a long evening: glucose drifts from 145 down to about 50 mg/dL at
        -- 02:15-02:45 and recovers by 04:00 (the shape of the simulator's overnightLow).
        return {
          name = "overnight-low",
          description = "glucose slides below 55 mg/dL at about 02:10 and stays there ~45 minutes",
          start = "2026-01-10T22:00:00Z", hours = 8,
          bg = { noise = 2, seed = 11, points = {
            {"0m", 145}, {"1h", 132}, {"2h", 112}, {"3h", 86}, {"3h45m", 62}, {"4h15m", 52},
            {"4h45m", 50}, {"5h15m", 66}, {"6h", 95}, {"8h", 112} } },
          loop = { every = "5m" },
          expect = {
            { notify = "urgent-low", within = "15m", of = "bg < 55" },
            { no_notify = "high" },
          },
        }
        """

    static let compressionLow = """
        -- Lying on the sensor: a sudden ~55 mg/dL drop at 01:00 for 25 minutes, then straight back.
        -- Real glucose cannot fall that fast; a careful low alert waits (sustained) and stays quiet.
        return {
          name = "compression-low",
          description = "a 25-minute compression artefact at 01:00 (drop to ~63 mg/dL), no real low",
          start = "2026-01-10T22:00:00Z", hours = 8,
          bg = { noise = 1.5, seed = 12, points = {
            {"0m", 126}, {"3h", 118}, {"3h05m", 71}, {"3h10m", 63}, {"3h25m", 64}, {"3h30m", 116}, {"8h", 121} } },
          loop = { every = "5m" },
          expect = {
            { no_notify = "urgent-low" },
          },
        }
        """

    static let sensorGap = """
        -- The phone loses the transmitter: no readings from 01:00 to 01:45, and one dropped reading
        -- later. Missing data must read as "stale", never as "OK".
        return {
          name = "sensor-gap",
          description = "45 minutes without readings from 01:00, one dropped reading at 04:10",
          start = "2026-01-10T22:00:00Z", hours = 8,
          bg = { noise = 2, seed = 13, points = { {"0m", 132}, {"3h", 121}, {"5h", 104}, {"8h", 126} } },
          missed = { { from = "3h", to = "3h45m" }, { from = "6h10m", to = "6h15m" } },
          loop = { every = "5m" },
          expect = {
            { notify = "stale", within = "25m", of = "3h" },
            { no_notify = "urgent-low" },
          },
        }
        """

    static let postMealRise = """
        -- A large late meal without a pre-bolus: glucose climbs 3-4 mg/dL per minute to ~310.
        return {
          name = "post-meal-rise",
          description = "a fast rise from 118 to ~310 mg/dL between 22:30 and 00:00",
          start = "2026-01-10T22:00:00Z", hours = 8,
          bg = { noise = 2.5, seed = 14, points = {
            {"0m", 115}, {"30m", 118}, {"1h20m", 290}, {"2h", 310}, {"3h", 252}, {"5h", 160}, {"8h", 128} } },
          loop = { every = "5m" },
          expect = {
            { notify = "high", within = "30m", of = "bg > 250" },
            { no_notify = "urgent-low" },
          },
        }
        """

    static let notLooping = """
        -- Loop stops reporting at midnight (pump out of range, phone asleep): devicestatus goes
        -- stale while CGM readings keep coming.
        return {
          name = "not-looping",
          description = "Loop's last devicestatus at 00:00; glucose readings continue",
          start = "2026-01-10T22:00:00Z", hours = 8,
          bg = { noise = 2, seed = 15, points = { {"0m", 128}, {"2h", 140}, {"4h", 171}, {"8h", 150} } },
          loop = { every = "5m", stop = "2h" },
          expect = {
            { notify = "not-looping", within = "45m", of = "2h" },
          },
        }
        """

    static let anchorDrag = """
        -- At anchor in a rising breeze: the boat swings within ~15 m of the anchor until 01:00,
        -- then the anchor drags and the boat drifts away (beyond the 40 m swing radius at ~01:10).
        return {
          name = "anchor-drag",
          description = "the anchor starts dragging at 01:00 in 18 m/s of wind; 40 m radius",
          start = "2026-01-10T22:00:00Z", hours = 6,
          boat = {
            anchor = { lat = 59.8512, lon = 10.6423 }, radius = 40, every = "1m", bearing = 225, depth = 7,
            points = { {"0m", 12}, {"3h", 15}, {"3h20m", 60}, {"3h40m", 150}, {"5h", 420}, {"6h", 420} },
            wind = { {"0m", 6}, {"2h", 12}, {"3h", 18}, {"6h", 14} },
          },
          expect = {
            { notify = "anchor-drag", within = "10m", of = "drift > 40" },
          },
        }
        """
}
