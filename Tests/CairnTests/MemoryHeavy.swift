import Testing

/// The tests that move many megabytes at once (a 200 MB upload whose test bounds the process's peak memory, records of
/// 9 and 11 MB), run one after another so that none of them inflates another's memory figures. Other tests still run
/// beside them.
@Suite("Tests that move many megabytes, one at a time", .serialized)
enum MemoryHeavy {}
