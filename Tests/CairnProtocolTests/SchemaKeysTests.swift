import CairnProtocol
import Foundation
import Testing

@Suite("Strict schemas: every key known, typos named with the nearest known key")
struct SchemaKeysTests {
    /// A schema using every key of every level.
    static let full = Schema(
        collections: [
            CollectionSchema(
                name: "sites", fields: [FieldSchema(name: "region", type: .string, required: true)], indexes: [["region"]],
                conflictPolicy: .mergeFields,
                rules: DataRules(
                    read: .or([.condition("region", .eq, .object(["param": "user.name"])), .not(.and([.condition("region", .exists, true)]))]),
                    write: .condition("region", .eq, "x")),
                table: "public.sites"),
            CollectionSchema(name: "jobs", fields: [.reference("site", to: "sites", onDelete: .cascade)]),
        ],
        number: 3, minimumSchemaVersion: 2,
        migrations: [
            SchemaMigration(collection: "sites", step: .rename(from: "area", to: "region")),
            SchemaMigration(collection: "sites", step: .convert(field: "count", to: .string, format: "yyyy")),
            SchemaMigration(collection: "sites", step: .drop(field: "old")), SchemaMigration(collection: "sites", step: .fill(field: "region", value: "n")),
            SchemaMigration(collection: "sites", step: .policy(.mergeFields)),
        ],
        actions: [ActionSchema(name: "close", url: "https://erp.example.com/close", timeoutSeconds: 5, role: .writer)])

    @Test("whatever the schema types write, the check accepts: the known keys are the coding keys")
    func encodedSchemasPass() throws {
        let document = try JSONValue(parsing: Array(CairnJSON.encode(Self.full)))
        try SchemaKeys.check(document)
    }

    @Test("a typo at any level is validation_failed naming its path and the nearest known key", arguments: [
        (#"{"collections": [{"name": "a", "confictPolicy": "reject"}]}"#, "collections[0].confictPolicy", "conflictPolicy"),
        (#"{"collections": [{"name": "a", "fields": [{"name": "f", "type": "string", "requird": true}]}]}"#, "collections[0].fields[0].requird", "required"),
        (#"{"colections": []}"#, "colections", "collections"),
        (#"{"collections": [{"name": "a", "rules": {"raed": {"and": []}}}]}"#, "collections[0].rules.raed", "read"),
        (#"{"collections": [{"name": "a", "rules": {"read": {"or": [{"feild": "x", "op": "eq", "value": 1}]}}}]}"#, "collections[0].rules.read.or[0].feild", "field"),
        (#"{"migrations": [{"collection": "a", "rename": {"form": "x", "to": "y"}}]}"#, "migrations[0].rename.form", "from"),
        (#"{"migrations": [{"colection": "a"}]}"#, "migrations[0].colection", "collection"),
        (#"{"actions": [{"name": "a", "url": "https://x", "timeoutSecond": 3}]}"#, "actions[0].timeoutSecond", "timeoutSeconds"),
        (#"{"collections": [{"name": "a", "fields": [{"name": "s", "type": "reference", "colection": "b"}]}]}"#, "collections[0].fields[0].colection", "collection"),
    ])
    func typos(text: String, path: String, suggestion: String) throws {
        let error = #expect(throws: ErrorBody.self) { try SchemaKeys.check(try JSONValue(parsing: Array(text.utf8))) }
        #expect(error?.code == .validationFailed)
        #expect(error?.details?["field"] == .string(path))
        #expect(error?.details?["suggestion"] == .string(suggestion))
        #expect(error?.message.contains("did you mean \"\(suggestion)\"") == true, "\(error?.message ?? "")")
    }

    @Test("a key near nothing known lists the known keys instead; values inside a filter are data, not keys")
    func farKeysAndValues() throws {
        let error = #expect(throws: ErrorBody.self) {
            try SchemaKeys.check(try JSONValue(parsing: Array(#"{"collections": [{"name": "a", "zzzzzzzzzz": 1}]}"#.utf8)))
        }
        #expect(error?.details?["suggestion"] == nil)
        #expect(error?.message.contains("known keys: conflictPolicy, fields, indexes, name, rules, table") == true, "\(error?.message ?? "")")
        try SchemaKeys.check(try JSONValue(parsing: Array(
            #"{"collections": [{"name": "a", "rules": {"read": {"field": "x", "op": "eq", "value": {"param": "claims.anything", "odd": 1}}}}]}"#.utf8)))
    }
}
