import CairnProtocol
import Foundation

extension Diagnostics {
    /// What stands in for a withheld file name.
    static let withheld = "(withheld)"

    /// The report as it leaves the device for support (``CairnClient/uploadDiagnostics()``): file names, which are the
    /// user's own words, are withheld, in the failed files and wherever an error message repeats one (names shorter
    /// than 4 characters are withheld only as names, so that messages stay readable). Record data is never in a report.
    func withholding(fileNames: Set<String>) -> Diagnostics {
        var report = self
        let repeated = fileNames.filter { $0.count >= 4 }.sorted { $0.count > $1.count }
        func scrub(_ text: String) -> String {
            repeated.reduce(text) { $0.replacingOccurrences(of: $1, with: Self.withheld) }
        }
        func scrubError(_ error: ErrorBody) -> ErrorBody {
            var error = error
            error.message = scrub(error.message)
            return error
        }
        report.failedFiles = failedFiles.map { file in
            var file = file
            file.name = Self.withheld
            file.error = file.error.map(scrubError)
            return file
        }
        report.failedUploads = failedUploads.map { upload in
            var upload = upload
            upload.error = scrubError(upload.error)
            return upload
        }
        report.recentErrors = recentErrors.map { error in
            var error = error
            error.message = scrub(error.message)
            return error
        }
        report.explanation = scrub(explanation)
        for name in fileNames where !name.isEmpty { report.explanation = report.explanation.replacingOccurrences(of: "(first: \(name):", with: "(first: \(Self.withheld):") }
        return report
    }
}
