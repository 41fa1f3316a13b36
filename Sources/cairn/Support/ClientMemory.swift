/// How the tool's client commands use memory. glibc gives each thread that allocates a malloc arena of its own, and an
/// arena keeps what it freed: a sync's pages, read on the cooperative threads and written on the store's queue, then
/// stay in several arenas at once. One arena for the whole process holds a first sync of 100,000 records and a push of
/// as many about 5 MB lower (62 MB instead of 67 at the peak, `scripts/outside/network.py`), for no measurable time in
/// a process with a handful of threads. `cairn serve` keeps glibc's default, one arena per core, for its many
/// concurrent requests. Elsewhere the system's allocator needs nothing.
enum ClientMemory {
    static func useOneArena() {
        #if os(Linux)
        _ = glibcMallopt(mArenaMax, 1)
        #endif
    }
}

#if os(Linux)
/// glibc's `mallopt` and its `M_ARENA_MAX` (from malloc.h, which the Glibc module does not import).
@_silgen_name("mallopt")
private func glibcMallopt(_ parameter: Int32, _ value: Int32) -> Int32
private let mArenaMax: Int32 = -8
#endif
