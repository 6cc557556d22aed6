import Synchronization

/// The started contexts by config name, and which one is main: the one named "main", or
/// else the first one started that is still running.
///
/// The process has one global registry. `DbContext.withIsolatedRegistry` gives a test (or any
/// scope) a registry of its own, so that tests running in parallel never see each other's
/// contexts, not even their "main".
final class ContextRegistry: Sendable {
    static let global = ContextRegistry()
    /// Bound only through `withScoped`, which `active` relies on (see there).
    @TaskLocal static var scoped: ContextRegistry?

    /// The registry in force here: the scoped one if any, else the global one. (A process that
    /// never scoped one skips the task-local lookup, 134 instructions on every dao call: a scope
    /// sets `everScoped` before it binds, so whoever can see a binding sees the flag.)
    static var active: ContextRegistry {
        everScoped.load(ordering: .acquiring) ? (scoped ?? global) : global
    }

    /// Set for good by the first scope, never cleared: tasks copy a binding, and may outlive its scope.
    private static let everScoped = Atomic<Bool>(false)

    /// Runs `body` with `registry` in force for it and the tasks it makes (nil: the global one).
    /// The only way to bind `scoped`: it sets `everScoped` first.
    static func withScoped<T>(_ registry: ContextRegistry?, _ body: () throws -> T) rethrows -> T {
        if registry != nil { everScoped.store(true, ordering: .releasing) }
        return try $scoped.withValue(registry, operation: body)
    }

    /// The async form of `withScoped`.
    static func withScoped<T>(_ registry: ContextRegistry?, _ body: () async throws -> T) async rethrows -> T {
        if registry != nil { everScoped.store(true, ordering: .releasing) }
        return try await $scoped.withValue(registry, operation: body)
    }

    private struct State {
        var contexts: [String: DbContext] = [:]   // by lowercased name
        var startOrder: [String] = []              // lowercased names
        var exact: [String: DbContext] = [:]       // by name as started: lookups skip lowercasing
        var main: DbContext?
    }
    private let state = Guarded(State())

    /// Bumped after every change to which context a declared model resolves to, in any registry:
    /// a context started or stopped, a declaration added, failed or brought back, a registry
    /// gone. A resolution remembered with this count is good while the count is unchanged.
    static let changes = Atomic<UInt64>(0)

    static func changed() {
        changes.add(1, ordering: .releasing)
    }

    init() {}

    deinit {
        // A later registry may reuse this one's address.
        Self.changed()
    }

    func add(_ context: DbContext) throws {
        let key = context.configName.lowercased()
        try state.withLock { state in
            if let existing = state.contexts[key] {
                throw DicRecordError(.duplicateConfig,
                    "a context named '\(existing.configName)' is already started; stop it first or choose another configName",
                    configName: context.configName)
            }
            state.contexts[key] = context
            state.startOrder.append(key)
            state.exact[context.configName] = context
            state.main = Self.main(of: state)
        }
        Self.changed()
    }

    func remove(_ context: DbContext) {
        let key = context.configName.lowercased()
        state.withLock { state in
            guard state.contexts[key] === context else { return }
            state.contexts[key] = nil
            state.startOrder.removeAll { $0 == key }
            state.exact[context.configName] = nil
            state.main = Self.main(of: state)
        }
        Self.changed()
    }

    /// The context for `name` (case-insensitive); nil or empty means main.
    func context(named name: String?) throws -> DbContext {
        try state.withLock { state in
            if let name, !name.isEmpty {
                if let found = state.exact[name] ?? state.contexts[name.lowercased()] { return found }
            } else if let main = state.main {
                return main
            }
            let known = state.startOrder.compactMap { state.contexts[$0]?.configName }
            let what = name.flatMap { $0.isEmpty ? nil : "no config named '\($0)'" } ?? "no main config"
            throw DicRecordError(.unknownConfig,
                "\(what) is started; known configs: \(known.isEmpty ? "none" : known.map { "'\($0)'" }.joined(separator: ", "))",
                configName: name)
        }
    }

    /// The context a declared model (`id`, its type named `model` in messages) runs on: the named
    /// one (which must have it registered), else main when it is registered there, else the first
    /// started context that has it.
    func context(declaring id: ObjectIdentifier, model: @autoclosure () -> String, named name: String?) throws -> DbContext {
        if let name, !name.isEmpty {
            let context = try context(named: name)
            guard try context.isDeclared(id) else {
                throw DicRecordError(.notRegistered,
                    "model \(model()) is not registered with config '\(context.configName)'; call register(\(model()).self) on that context",
                    configName: context.configName)
            }
            return context
        }
        let candidates = state.withLock { state in
            (state.main.map { [$0] } ?? []) + state.startOrder.compactMap { state.contexts[$0] }
        }
        for context in candidates where try context.isDeclared(id) { return context }
        throw DicRecordError(.notRegistered,
            "model \(model()) is not registered with any started config (started: \(candidates.isEmpty ? "none" : candidates.map { "'\($0.configName)'" }.joined(separator: ", "))); call context.register(\(model()).self) before start(); in memory, a model works unregistered",
            configName: nil)
    }

    private static func main(of state: State) -> DbContext? {
        state.contexts["main"] ?? state.startOrder.first.flatMap { state.contexts[$0] }
    }
}
