extension CairnClient {
    /// What the next ``sync()`` will download, asked of the server before any data flows: the records of each
    /// collection or download query still to be downloaded for the first time (the server's count, with the user's data
    /// rules), and the time they take at the rate the last download measured. Downloads nothing else.
    ///
    /// ```swift
    /// let estimate = try await client.estimateDownload()
    /// banner.text = "\(estimate.records) records to download"
    /// ```
    ///
    /// - Throws: `network_unavailable` offline; `unauthorized` without a session.
    public func estimateDownload() async throws -> DownloadEstimate {
        try checkOpen()
        return try await engine.estimateDownload()
    }
}
