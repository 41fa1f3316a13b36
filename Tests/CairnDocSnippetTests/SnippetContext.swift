import Cairn
import CairnProtocol
import CairnServer
import Foundation

// The names the documentation's samples use without declaring them, as an app would have them. The samples are
// compiled, not run (except the README's test example, a real test): these values are never read when compiled only.

/// The app's client, opened elsewhere in the app.
var client: CairnClient { fatalError("documentation samples are compiled, not run") }
/// The configuration being built.
nonisolated(unsafe) var configuration = CairnConfiguration(
    serverURL: URL(string: "https://sync.example.com")!, project: "field", device: "iPad-7",
    credentials: .password(user: "alice", password: password), store: .inMemory)
let password = "a long password"
let passphrase = "correct horse battery staple"
let url = URL(string: "https://sync.example.com")!
let credentials = Credentials.password(user: "alice", password: password)
let storePath = NSTemporaryDirectory() + "field.sqlite"
let storeURL = URL(fileURLWithPath: storePath)
let photoURL = URL(fileURLWithPath: "/tmp/photo.jpg")
let responseBody = Data("[]".utf8)

/// The note most samples store.
struct Note: Codable, Sendable { var id: String; var title: String; var done: Bool; var due: Date? }
let imported: [Note] = []
func render(_ records: [LocalRecord]) {}
func badge(_ count: Int) {}

/// The schema of the README's test example: inspections with a status.
let schema = Schema(collections: [
    CollectionSchema(name: "inspections", fields: [
        FieldSchema(name: "site", type: .string), FieldSchema(name: "status", type: .string), FieldSchema(name: "score", type: .integer),
    ])
])

/// The app's account and identity provider SDK, in the README's token sign-in.
struct Account { var subject = "alice" }
let account = Account()
struct IdentityProviderSDK { func accessToken() async throws -> String { "" } }
let identityProvider = IdentityProviderSDK()
