import Foundation

/// A to-one reference (GYDataCenter's lazy relation), stored as `<name>_id`.
///
/// ```swift
/// final class Student: Model {
///     @Column var name: String?
///     @Reference var teacher: Teacher?        // column "teacher_id" INTEGER
/// }
/// let t = student.teacher      // first access: one query; later accesses: none
/// student.teacher = other      // sets teacher_id
/// try Student.dao.preload(\.teacher, in: students)   // N students: one query for all teachers
/// ```
/// The referenced model is found through the same config as the referring one. A failed load
/// reads as nil and logs a warning on the referring model's context's logger (once per property
/// and kind of error); `try student.load(\.teacher)` throws the reason.
@propertyWrapper
public struct Reference<Target: Model>: ModelField {
    @usableFromInline var probe = false

    /// A to-one reference stored in the `<name>_id` column.
    /// ```swift
    /// @Reference var teacher: Teacher?
    /// ```
    @inlinable
    public init() {}

    /// Unavailable: `@Reference` works only on properties of a `Model`.
    /// ```swift
    /// @Reference var teacher: Teacher?   // inside `final class Student: Model { … }`
    /// ```
    @available(*, unavailable, message: "@Reference is only available on properties of a Model")
    public var wrappedValue: Target? {
        get { fatalError("unreachable: wrappedValue is @available(*, unavailable); models reach the value through subscript(_enclosingInstance:)") }
        set { fatalError("unreachable: wrappedValue is @available(*, unavailable); models reach the value through subscript(_enclosingInstance:)") }
    }

    /// Reads and writes of the property: a read loads the referenced model (nil when the key is
    /// NULL, or when the load fails, which is logged), a write sets the `<name>_id` column (to
    /// NULL, with a warning, for a model with no `id`: save it first).
    /// ```swift
    /// let teacher = student.teacher
    /// student.teacher = other          // sets teacher_id to other.id
    /// ```
    public static subscript<M: Model>(_enclosingInstance model: M,
                                      wrapped wrappedKeyPath: ReferenceWritableKeyPath<M, Target?>,
                                      storage storageKeyPath: ReferenceWritableKeyPath<M, Reference<Target>>) -> Target? {
        get {
            guard let info = model.referenceInfo(storageKeyPath, wrapped: wrappedKeyPath) else { return nil }
            do {
                return try model.loadReference(info, as: Target.self)
            } catch {
                model.relationReporter.reportFailedRelation(
                    "@Reference", info.name, of: "\(M.self)", readsAs: "nil", throwing: "load(\\.\(info.name))", error: error)
                return nil
            }
        }
        set {
            guard let info = model.referenceInfo(storageKeyPath, wrapped: wrappedKeyPath) else { return }
            if let newValue, newValue.id == nil {
                model.relationReporter.reportReferenceWithoutId(
                    info.name, of: "\(M.self)", target: "\(Target.self)", column: info.column.name)
            }
            model.storage.set(info.column.name, newValue?.id)
            model.keep(LoadedReference(key: model.storage.storedValueWithBytes(info.column.name) ?? StoredValue(.null), model: newValue),
                       as: info.name)
        }
    }

    func describe(name: String) -> FieldDescription {
        .reference(ReferenceInfo(name: name, target: Target.self))
    }
}

/// A to-many accessor: the models of `Child` whose `foreignKey` column holds this model's id.
///
/// ```swift
/// final class Teacher: Model {
///     @Column var name: String?
///     @Children(foreignKey: "teacher_id") var students: [Student]
/// }
/// let students = teacher.students     // one query per access; never cached
/// ```
/// Reads run on the teacher's config; a failed query reads as `[]` and logs a warning on the
/// teacher's context's logger (once per property and kind of error).
@propertyWrapper
public struct Children<Child: Model>: ModelField {
    let foreignKey: String
    var probe = false

    /// A to-many accessor over the `Child` rows whose `foreignKey` column holds this model's id.
    /// ```swift
    /// @Children(foreignKey: "teacher_id") var students: [Student]
    /// ```
    public init(foreignKey: String) {
        self.foreignKey = foreignKey
    }

    /// Unavailable: `@Children` works only on properties of a `Model`.
    /// ```swift
    /// @Children(foreignKey: "teacher_id") var students: [Student]   // inside a Model
    /// ```
    @available(*, unavailable, message: "@Children is only available on properties of a Model")
    public var wrappedValue: [Child] {
        fatalError("unreachable: wrappedValue is @available(*, unavailable); models reach the value through subscript(_enclosingInstance:)")
    }

    /// Reads of the property: one query per read, `[]` when the model has no id yet or the query
    /// fails (a failure is logged as a warning on the model's context's logger, once per kind of
    /// error).
    /// ```swift
    /// for student in teacher.students { print(student.name as Any) }
    /// ```
    public static subscript<M: Model>(_enclosingInstance model: M,
                                      wrapped wrappedKeyPath: KeyPath<M, [Child]>,
                                      storage storageKeyPath: ReferenceWritableKeyPath<M, Children<Child>>) -> [Child] {
        // The id as stored: TEXT that is not UTF-8 by its bytes (its replacement characters are
        // another parent's id, or none).
        guard let id = model.storage.storedValueWithBytes("id"), id.value != .null else { return [] }
        var key = StoredValues()
        key.append("id", id)
        let foreignKey = model[keyPath: storageKeyPath].foreignKey
        let dao = Dao<Child>(binding: model.binding)
        do {
            return try dao.find(condition: "\(SqlText.quote(foreignKey)) = ?", .stored(key))
        } catch {
            model.relationReporter.reportFailedRelation("@Children", "\(Child.self) by \(foreignKey)", of: "\(M.self)", readsAs: "[]",
                                                        throwing: "\(Child.self).dao.findByCondition(#\"\(SqlText.quote(foreignKey)) = ?\"#, id)", error: error)
            return []
        }
    }

    func describe(name: String) -> FieldDescription { .children }
}

/// A declared to-one reference.
final class ReferenceInfo: Sendable {
    let name: String
    let target: Model.Type
    /// Its `<name>_id` column.
    let column: ColumnInfo

    init(name: String, target: Model.Type, slot: Int = 0) {
        self.name = name
        self.target = target
        column = ColumnInfo.make(name: "\(name)_id", type: Int?.self, initialValue: nil).with(slot: slot)
    }

    func with(slot: Int) -> ReferenceInfo {
        ReferenceInfo(name: name, target: target, slot: slot)
    }
}

/// A loaded reference and the key it was loaded for (a changed key loads again; TEXT that is not
/// UTF-8 compared by its bytes, so a key changed to other text that reads the same does too).
struct LoadedReference {
    let key: StoredValue
    let model: Model?
}

extension Model {
    /// Where a failed relation read of this model is reported: its context's logger, or
    /// swift-log's `DicRecord` label when its context cannot be found.
    var relationReporter: ReadReporter {
        (try? persistenceTarget().0.context().tracer.reads) ?? .builtInCode
    }

    func referenceInfo<M: Model, Target: Model>(_ key: ReferenceWritableKeyPath<M, Reference<Target>>,
                                                wrapped: ReferenceWritableKeyPath<M, Target?>) -> ReferenceInfo? {
        guard let model = self as? M else { return nil }
        let field = FieldResolver.entry(key)?.field ?? FieldResolver.field(key, on: model)
        guard let field, case .reference(let info) = field.description else { return nil }
        if FieldResolver.entry(wrapped) == nil { FieldResolver.add(wrapped, field) }
        return info
    }

    /// The referenced model: the one loaded for the current key, else one query.
    func loadReference<Target: Model>(_ info: ReferenceInfo, as type: Target.Type) throws -> Target? {
        guard let key = storage.storedValueWithBytes(info.column.name), key.value != .null else { return nil }
        if let loaded = loadedReferences?[info.name], loaded.key == key { return loaded.model as? Target }
        let found = try Dao<Target>(binding: binding).findById(stored: key, column: info.column.name)
        keep(LoadedReference(key: key, model: found), as: info.name)
        return found
    }

}

extension ModelType {
    /// Loads a `@Reference` now, throwing why it fails (the property reads nil instead).
    /// ```swift
    /// let teacher = try student.load(\.teacher)
    /// ```
    public func load<Target: Model>(_ reference: KeyPath<Self, Target?>) throws -> Target? {
        let info = try Self.dao.referenceInfo(reference)
        return try loadReference(info, as: Target.self)
    }
}
