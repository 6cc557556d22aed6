// Model: how models register with a context, through the declaration protocol the context owns.
import Foundation

/// A model as the context keeps it.
struct ModelDeclaration: ContextDeclaration, @unchecked Sendable {   // a metatype: read only, never mutable state
    let model: Model.Type
    var id: ObjectIdentifier { ObjectIdentifier(model) }

    static func model(_ declaration: any ContextDeclaration) -> Model.Type {
        // The context holds only what `register(_:)` gave it, and that is models.
        (declaration as! ModelDeclaration).model
    }
}

extension DbContext {
    /// Registers model classes: at start their tables are created or brought up to date (one
    /// transaction for all of them). Registered after start, the schema work runs at once; if it
    /// fails, the model's operations throw why.
    /// ```swift
    /// main.register(Student.self, Teacher.self)
    /// ```
    public func register(_ models: Model.Type...) {
        declare(models.map(ModelDeclaration.init), upkeep: SchemaUpkeep.upkeep)
    }

    /// Whether `model` is registered here; throws why a model registered after start is unusable.
    func hasModel(_ model: Model.Type) throws -> Bool {
        try isDeclared(ObjectIdentifier(model))
    }
}
