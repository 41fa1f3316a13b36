import CairnProtocol

extension UserSummary {
    /// Users from rows of `(name, operator, project, role)` in name order, a user's rows together (`project` and
    /// `role` are `nil` for a user of no project).
    static func grouped(_ rows: [(String, Bool, String?, String?)]) -> [UserSummary] {
        var users: [UserSummary] = []
        for (name, isOperator, project, role) in rows {
            if users.last?.name != name { users.append(UserSummary(name: name, isOperator: isOperator, projects: [])) }
            if let project, let role = role.flatMap(Role.init(rawValue:)) {
                users[users.count - 1].projects.append(ProjectMembership(name: project, role: role))
            }
        }
        return users
    }
}
