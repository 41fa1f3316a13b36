#if !canImport(SwiftUI)
// Off Apple platforms there is no SwiftUI: the documentation's SwiftUI samples compile here against this stand-in,
// which declares only the few SwiftUI names they use, with SwiftUI's shapes. What these samples call of Cairn is
// checked for real; their SwiftUI calls are checked for real only by the macOS build (.github/workflows/apple.yml).

@MainActor @preconcurrency protocol View {
    associatedtype Body: View
    @ViewBuilder var body: Body { get }
}

extension Never: View {
    var body: Never { return fatalError() }
}

/// A view made of the views of a builder block.
struct BuiltView: View {
    var body: Never { return fatalError() }
}

@resultBuilder enum ViewBuilder {
    static func buildBlock() -> BuiltView { BuiltView() }
    static func buildBlock<V: View>(_ view: V) -> BuiltView { BuiltView() }
    static func buildBlock<A: View, B: View>(_ first: A, _ second: B) -> BuiltView { BuiltView() }
    static func buildBlock<A: View, B: View, C: View>(_ first: A, _ second: B, _ third: C) -> BuiltView { BuiltView() }
    static func buildOptional(_ view: BuiltView?) -> BuiltView { BuiltView() }
    static func buildEither(first view: BuiltView) -> BuiltView { BuiltView() }
    static func buildEither(second view: BuiltView) -> BuiltView { BuiltView() }
}

struct Text: View {
    init(_ text: String) {}
    var body: Never { return fatalError() }
}

struct List: View {
    init<Data: RandomAccessCollection, ID: Hashable, Row: View>(
        _ data: Data, id: KeyPath<Data.Element, ID>, @ViewBuilder rowContent: @escaping (Data.Element) -> Row
    ) {}
    var body: Never { return fatalError() }
}

struct NavigationStack<Content: View>: View {
    init(@ViewBuilder content: () -> Content) {}
    var body: Never { return fatalError() }
}

@propertyWrapper struct State<Value> {
    private var value: Value
    init(wrappedValue: Value) { value = wrappedValue }
    init(initialValue: Value) { value = initialValue }
    var wrappedValue: Value {
        get { value }
        nonmutating set {}
    }
    var projectedValue: Binding<Value> { Binding() }
}

struct Binding<Value> {}

extension View {
    func navigationTitle(_ title: String) -> BuiltView { BuiltView() }
    func searchable(text: Binding<String>) -> BuiltView { BuiltView() }
    func overlay<V: View>(@ViewBuilder content: () -> V) -> BuiltView { BuiltView() }
    func task(_ action: @escaping @MainActor @Sendable () async -> Void) -> BuiltView { BuiltView() }
    func onChange<V: Equatable>(of value: V, _ action: @escaping (V, V) -> Void) -> BuiltView { BuiltView() }
}
#endif
