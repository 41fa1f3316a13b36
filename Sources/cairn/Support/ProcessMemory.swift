import Foundation

/// How many malloc arenas the tool's process keeps. glibc gives each thread that allocates an arena of its own, up to
/// eight per core, and an arena keeps what it freed: pages read on one thread and written on another, batches parsed
/// on the request threads, then stay in several arenas at once.
/// - The client commands use one arena: a first sync of 100,000 records and a push of as many peak about 5 MB lower
///   (62 MB instead of 67, `scripts/outside/network.py`), for no measurable time in a process with a handful of threads.
/// - `cairn serve` uses one per core: its requests run concurrently on every core, and the same check's server peaked
///   at 107 MB instead of 137 (100,000 records created, synced and pushed again).
/// Elsewhere the system's allocator needs nothing.
enum ProcessMemory {
    /// One arena, for the client commands.
    static func useOneArena() { limitArenas(to: 1) }

    /// One arena per core, for the server.
    static func useOneArenaPerCore() { limitArenas(to: ProcessInfo.processInfo.activeProcessorCount) }

    private static func limitArenas(to count: Int) {
        #if os(Linux)
        _ = glibcMallopt(mArenaMax, Int32(clamping: max(1, count)))
        #endif
    }
}

#if os(Linux)
/// glibc's `mallopt` and its `M_ARENA_MAX` (from malloc.h, which the Glibc module does not import).
@_silgen_name("mallopt")
private func glibcMallopt(_ parameter: Int32, _ value: Int32) -> Int32
private let mArenaMax: Int32 = -8
#endif
