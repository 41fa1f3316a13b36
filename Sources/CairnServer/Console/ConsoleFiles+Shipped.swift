import Foundation

extension ConsoleFiles {
    /// The console shipped with this module.
    static let shipped = ConsoleFiles(directory: Bundle.module.url(forResource: "console", withExtension: nil))
}
