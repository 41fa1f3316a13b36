/// A record's place in a project: its collection and id.
struct RecordKey: Hashable, Sendable {
    let collection: String
    let id: String
}
