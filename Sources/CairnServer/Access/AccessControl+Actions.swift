import CairnProtocol

extension AccessControl {
    /// Checks that the member calling may call `action`: its role is at least the one the action declares
    /// (`writer` by default), else `403 forbidden`. Data rules do not apply to an action's arguments: the backend
    /// decides what the caller may do.
    func checkMayCall(_ action: ActionSchema, _ caller: ProjectAccess) throws {
        guard caller.role >= action.role else {
            throw ErrorBody.forbidden(
                "Calling \(action.name) needs the \(action.role.rawValue) role in \(caller.project); you are \(caller.role.rawValue)")
        }
    }
}
