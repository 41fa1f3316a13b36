extension JSONValue {
    /// Applies a JSON Merge Patch (RFC 7396): objects merge member by member, `null` removes a member,
    /// anything else replaces.
    ///
    /// ```swift
    /// let doc: JSONValue = ["a": 1, "b": ["c": 2]]
    /// doc.merging(patch: ["b": ["c": nil, "d": 3]])  // ["a": 1, "b": ["d": 3]]
    /// ```
    public func merging(patch: JSONValue) -> JSONValue {
        guard case .object(let patchMembers) = patch else { return patch }
        var target = objectValue ?? [:]
        JSONValue.merge(&target, patchMembers)
        return .object(target)
    }

    /// Applies the members of a merge patch to an object's members.
    public static func merge(_ target: inout [String: JSONValue], _ patch: [String: JSONValue]) {
        for (key, value) in patch {
            if value.isNull {
                target.removeValue(forKey: key)
            } else if case .object = value {
                target[key] = (target[key] ?? .object([:])).merging(patch: value)
            } else {
                target[key] = value
            }
        }
    }
}
