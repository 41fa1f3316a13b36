import ArgumentParser
import Cairn
import CairnProtocol
import Foundation
import Synchronization

/// `cairn files`: file attachments against a server, through a local store (uploads are queued there and resume
/// after an interruption).
struct FilesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "files",
        abstract: "Upload, list, download, inspect and delete files on a server.",
        discussion: """
            Uploads go through a local store: they are queued there first, so an interrupted upload (a lost \
            connection, a killed process) resumes where it stopped on the next `cairn files upload` or `cairn sync`. \
            Progress shows as a bar on a terminal and as plain lines otherwise. The password comes from CAIRN_PASSWORD.

            Examples:
              cairn files upload --store field.sqlite photo.jpg \\
                --type image/jpeg --tag site-7 --attach notes/n-1/photo
              cairn files list --store field.sqlite --tag site-7
              cairn files download --store field.sqlite 0b5e... --output photo.jpg
              cairn files upload --store field.sqlite report.pdf --private --share ana --source scan
              cairn files share --store field.sqlite 0b5e... ben
            """,
        subcommands: [
            FilesUpload.self, FilesList.self, FilesDownload.self, FilesInfo.self, FilesShare.self, FilesUnshare.self, FilesDelete.self,
        ])

    /// A record field given as COLLECTION/ID/FIELD.
    static func attachment(_ text: String, option: String) throws -> FileAttachment {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3, parts.allSatisfy({ !$0.isEmpty }) else { throw CLIError("\(option) takes COLLECTION/ID/FIELD") }
        return FileAttachment(collection: parts[0], id: parts[1], field: parts[2])
    }
}

struct FilesUpload: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "upload", abstract: "Upload a file (and any upload an earlier run left unfinished); prints the server's file id.")

    @OptionGroup var options: StoreOptions
    @Argument(help: "The file to upload.") var path: String
    @Option(name: .long, help: "The name kept with the file (default: the file's name).") var name: String?
    @Option(name: .long, help: "The MIME type (default: application/octet-stream).") var type: String?
    @Option(name: .long, help: "A tag; repeat for several.") var tag: [String] = []
    @Flag(name: .long, help: "Make the file readable without a token.") var `public` = false
    @Option(name: .long, help: "Set this record field to the file once uploaded: COLLECTION/ID/FIELD.") var attach: String?
    @Option(name: .long, help: "Where the file came from, in your words (camera, scan, import).") var source: String?
    @Flag(name: .long, help: "Keep the file to its uploader, the project's admins and the users named by --share.") var `private` = false
    @Option(name: .long, help: "A user who may also read the private file; repeat for several.") var share: [String] = []

    func run() async throws {
        let client = try await options.open(connect: true)
        var target: FileAttachment?
        if let attach {
            let parsed = try FilesCommand.attachment(attach, option: "--attach")
            target = parsed
            // The record must be local: fetch the server's records first.
            _ = try await CLIError.wrap("cannot sync before attaching") { try await client.pull([parsed.collection]) }
        }
        guard share.isEmpty || `private` else { throw CLIError("--share names users who may read a private file: add --private") }
        let url = URL(fileURLWithPath: path)
        let permissions = `private` ? FilePermissions(access: .private, sharedWith: share) : .project
        let localID = try CLIError.wrap("cannot queue \(path)") {
            try client.files.upload(
                from: url, name: name, contentType: type, tags: tag, public: `public`, attachTo: target, source: source, permissions: permissions)
        }
        let shown = Mutex<String?>(localID)
        try await TransferProgress.watching(client, id: { shown.withLock { $0 } }, label: "upload \(name ?? url.lastPathComponent)") {
            try await FilesUpload.finish(client)
        }
        guard let job = try client.files.upload(localID) else { throw CLIError("the upload of \(path) disappeared") }
        switch job.state {
        case .completed: print(job.serverID ?? "")
        case .failed: throw CLIError("the upload of \(path) failed: \(job.error?.message ?? "unknown") (\(job.error?.code.rawValue ?? ""))")
        case .queued: throw CLIError("the upload of \(path) is not finished (\(job.error?.message ?? "the server is unreachable")); run again to resume")
        }
    }

    /// Pushes records first (attachments wait for them), then runs every ready upload to its end.
    static func finish(_ client: CairnClient) async throws {
        _ = try await CLIError.wrap("sync failed") { try await client.push() }
        await client.files.waitForUploads()
        for failed in try client.files.failedUploads() {
            FileHandle.standardError.write(Data("failed upload \(failed.name): \(failed.error?.message ?? "")\n".utf8))
        }
    }
}

struct FilesList: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "List the server's files: id, status, size, name and tags, one per line (or JSON).",
        discussion: "With --json, one JSON object per line.")

    @OptionGroup var options: StoreOptions
    @Option(name: .long, help: "Only files whose name matches this pattern (% any run, _ one character).") var name: String?
    @Option(name: .long, help: "Only files with this tag; repeat for several (all must match).") var tag: [String] = []
    @Option(name: .long, help: "Only files in this status: new, completed or deleted; repeat for several.") var status: [String] = []
    @OptionGroup var output: JSONOutputOption

    func run() async throws {
        let statuses = try status.map { text -> FileStatus in
            guard let status = FileStatus(rawValue: text) else { throw CLIError("--status is new, completed or deleted") }
            return status
        }
        let client = try await options.open(connect: true)
        let files = try await CLIError.wrap("cannot list files") {
            try await client.files.search(FileSearch(name: name, tags: tag, statuses: statuses, pageSize: 1000))
        }
        for file in files {
            if output.json {
                print(String(decoding: try CairnJSON.encode(file), as: UTF8.self))
            } else {
                print([file.id, file.status.rawValue, "\(file.size)", file.name, file.tags.joined(separator: ",")].joined(separator: "\t"))
            }
        }
    }
}

struct FilesDownload: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "download", abstract: "Download a file by its id.")

    @OptionGroup var options: StoreOptions
    @Argument(help: "The file id.") var id: String
    @Option(name: .shortAndLong, help: "Where to write it (default: its name in the current folder; - for standard output).")
    var output: String?

    func run() async throws {
        let client = try await options.open(connect: true)
        let metadata = try await CLIError.wrap("cannot read file \(id)") { try await client.files.metadata(id) }
        // Into the store's cache first (with progress), then out of it: decrypted, for an encrypted store.
        _ = try await TransferProgress.watching(client, id: { [id] in id }, label: "download \(metadata.name)") {
            try await CLIError.wrap("cannot download \(id)") { try await client.files.download(id) }
        }
        if output == "-" {
            try await CLIError.wrap("cannot read \(id)") {
                try await client.files.read(id) { FileHandle.standardOutput.write($0) }
            }
            return
        }
        // The name is the server's metadata: only its last component is used, never a path it spells.
        let fallback = (metadata.name as NSString).lastPathComponent
        let destination = URL(fileURLWithPath: output ?? (fallback.isEmpty || fallback == ".." || fallback == "." ? metadata.id : fallback))
        // A hard link where the file system allows (no second copy of a large file); a decrypted copy otherwise.
        try await CLIError.wrap("cannot write \(destination.path)") { try await client.files.copy(id, to: destination) }
        print("\(destination.path)\t\(metadata.size) bytes\tsha256 \(metadata.sha256 ?? "")")
    }
}

struct FilesShare: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "share", abstract: "Let named users read a private file (its uploader or an admin); prints its metadata as JSON.")

    @OptionGroup var options: StoreOptions
    @Argument(help: "The file id.") var id: String
    @Argument(help: "The users to share it with.") var users: [String]

    func run() async throws { try await Self.change(options, id, users, adding: true) }

    /// Adds `users` to (or, not `adding`, takes them off) the file's shared users, and prints its metadata.
    static func change(_ options: StoreOptions, _ id: String, _ users: [String], adding: Bool) async throws {
        let client = try await options.open(connect: true)
        let metadata = try await CLIError.wrap("cannot \(adding ? "share" : "unshare") file \(id)") {
            adding ? try await client.files.share(id, with: users) : try await client.files.unshare(id, from: users)
        }
        print(String(decoding: try CairnJSON.encode(metadata), as: UTF8.self))
    }
}

struct FilesUnshare: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unshare", abstract: "Stop sharing a file with named users (its uploader or an admin); prints its metadata as JSON.")

    @OptionGroup var options: StoreOptions
    @Argument(help: "The file id.") var id: String
    @Argument(help: "The users to take off.") var users: [String]

    func run() async throws { try await FilesShare.change(options, id, users, adding: false) }
}

struct FilesInfo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "info", abstract: "Print a file's metadata as JSON.")

    @OptionGroup var options: StoreOptions
    @Argument(help: "The file id.") var id: String

    func run() async throws {
        let client = try await options.open(connect: true)
        let metadata = try await CLIError.wrap("cannot read file \(id)") { try await client.files.metadata(id) }
        print(String(decoding: try CairnJSON.encode(metadata), as: UTF8.self))
    }
}

struct FilesDelete: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete", abstract: "Delete a file (its bytes are removed on the server), offline too.",
        discussion: """
            The deletion is queued in the local store with the patch that clears the record field (--detach), then \
            sent at once; offline it stays queued and the next `cairn sync` sends it. A file whose upload has not \
            completed is not sent at all: its upload is cancelled.
            """)

    @OptionGroup var options: StoreOptions
    @Argument(help: "The file id (or the local id of an upload).") var id: String
    @Option(name: .long, help: "Clear this record field: COLLECTION/ID/FIELD.") var detach: String?

    func run() async throws {
        let target = try detach.map { try FilesCommand.attachment($0, option: "--detach") }
        let client = try await options.open(connect: false)
        try await CLIError.wrap("cannot delete \(id)") { try await client.files.delete(id, detachFrom: target) }
        do {
            try await client.push()
        } catch let error as CairnError where error.isRetryable {
            print("queued the deletion of \(id); the next `cairn sync` sends it (\(error.message))")
            return
        } catch {
            throw CLIError("queued the deletion of \(id), but the push failed: \(CLIError.describe(error))")
        }
        if let failed = try client.files.failedDeletions().first(where: { $0.id == id }) {
            throw CLIError("the server refused to delete \(id): \(failed.error?.message ?? "") (\(failed.error?.code.rawValue ?? ""))")
        }
        print("deleted \(id)")
    }
}
