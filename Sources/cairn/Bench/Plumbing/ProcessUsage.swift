import Foundation

/// What a process has used, read from `/proc` on Linux; `nil` elsewhere.
enum ProcessUsage {
    /// Peak resident memory (`VmHWM` of `/proc/PID/status`), in bytes.
    static func peakRSS(pid: Int32? = nil) -> Int? {
        let path = "/proc/\(pid.map(String.init) ?? "self")/status"
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            let digits = line.split(separator: " ").dropFirst().first.flatMap { Int($0) }
            return digits.map { $0 * 1024 }
        }
        return nil
    }

    /// CPU time used so far, user and system, in seconds (`utime + stime` of `/proc/PID/stat`, all threads).
    static func cpuSeconds(pid: Int32? = nil) -> Double? {
        let path = "/proc/\(pid.map(String.init) ?? "self")/stat"
        guard let text = try? String(contentsOfFile: path, encoding: .utf8),
              let end = text.lastIndex(of: ")") else { return nil }
        // Fields after the command name: state is field 3, utime 14, stime 15.
        let fields = text[text.index(after: end)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }
}
