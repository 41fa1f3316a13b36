import CairnProtocol

extension DataStep {
    /// Moves the field versions as the step moves the fields, so a migration is not a change of the fields for the
    /// `merge-fields` policy: a renamed field keeps the version its value last changed at.
    func carry(_ fieldVersions: inout [String: Int64]) {
        switch kind {
        case .rename(let from, let to):
            if let version = fieldVersions.removeValue(forKey: from), fieldVersions[to] == nil { fieldVersions[to] = version }
        case .drop(let field):
            fieldVersions[field] = nil
        case .convert, .fill:
            return
        }
    }
}

extension StoredRecordState {
    /// The state with `steps` applied to its data and carried to its field versions: a stored record brought to a
    /// newer schema's shape, by a migration's page or by a read before the migration reached it.
    func applying(_ steps: [DataStep]) -> StoredRecordState {
        var shaped = self
        for step in steps {
            step.apply(to: &shaped.record.data)
            step.carry(&shaped.fieldVersions)
        }
        return shaped
    }
}
