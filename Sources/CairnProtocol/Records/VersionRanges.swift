/// A set of record versions as sorted, disjoint ranges, written `1001-2000,2005,2010-2012`: the versions a client's own
/// writes committed at, sent with a pull (`own=`) so that the feed leaves out the states the client already holds.
///
/// ```swift
/// var own = VersionRanges()
/// own.insert(1001...2000)
/// own.insert(2005...2005)
/// own.text                                  // "1001-2000,2005"
/// VersionRanges(text: "7-9")?.contains(8)   // true
/// ```
public struct VersionRanges: Sendable, Hashable {
    /// The ranges, sorted, disjoint and not adjacent.
    public private(set) var ranges: [ClosedRange<Int64>] = []

    /// The most ranges a request may carry.
    public static let maximumCount = 256

    /// An empty set.
    public init() {}

    /// The set `text` writes (`LOW-HIGH` or `VERSION`, separated by commas, versions positive); `nil` for anything
    /// else, or more than ``maximumCount`` ranges.
    public init?(text: String) {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false)
        guard !parts.isEmpty, parts.count <= Self.maximumCount else { return nil }
        for part in parts {
            let bounds = part.split(separator: "-", omittingEmptySubsequences: false)
            guard (1...2).contains(bounds.count), let low = Int64(bounds[0]), let high = Int64(bounds[bounds.count - 1]),
                low > 0, low <= high
            else { return nil }
            insert(low...high)
        }
    }

    /// True when no version is in the set.
    public var isEmpty: Bool { ranges.isEmpty }

    /// The set as text: `1001-2000,2005`.
    public var text: String {
        ranges.map { $0.lowerBound == $0.upperBound ? String($0.lowerBound) : "\($0.lowerBound)-\($0.upperBound)" }.joined(separator: ",")
    }

    /// True when `version` is in the set.
    public func contains(_ version: Int64) -> Bool {
        var low = 0, high = ranges.count
        while low < high {
            let middle = (low + high) / 2
            if ranges[middle].upperBound < version { low = middle + 1 } else { high = middle }
        }
        return low < ranges.count && ranges[low].contains(version)
    }

    /// Adds `range`, merging it with the ranges it overlaps or touches.
    public mutating func insert(_ range: ClosedRange<Int64>) {
        var merged = range
        var kept: [ClosedRange<Int64>] = []
        kept.reserveCapacity(ranges.count + 1)
        for existing in ranges {
            if existing.upperBound + 1 < merged.lowerBound || merged.upperBound + 1 < existing.lowerBound {
                kept.append(existing)
            } else {
                merged = min(existing.lowerBound, merged.lowerBound)...max(existing.upperBound, merged.upperBound)
            }
        }
        let index = kept.firstIndex { $0.lowerBound > merged.upperBound } ?? kept.count
        kept.insert(merged, at: index)
        ranges = kept
    }

    /// The set without its lowest ranges, so that it holds at most `count`: the newest writes are the likeliest to be
    /// pulled next, and leaving a version out only means its state comes again.
    public func newest(_ count: Int) -> VersionRanges {
        var newest = self
        newest.ranges = Array(ranges.suffix(max(count, 0)))
        return newest
    }

    /// The set without the versions up to `version`.
    public func dropping(through version: Int64) -> VersionRanges {
        var kept = VersionRanges()
        kept.ranges = ranges.compactMap { range in
            range.upperBound <= version ? nil : max(range.lowerBound, version + 1)...range.upperBound
        }
        return kept
    }

    /// The highest version in the set.
    public var highest: Int64? { ranges.last?.upperBound }
}
