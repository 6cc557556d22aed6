/// The arguments of a statement, given at once: an array literal for `?` and `?NNN`
/// placeholders, or a dictionary literal for `:name` (also `@name` and `$name`) placeholders.
///
/// Every `arguments:` parameter of the library takes one; write the literal in place, or wrap a
/// variable with ``init(_:)-([DatabaseArgument])`` or ``init(_:)-([String:DatabaseArgument])``.
/// ```swift
/// let teens = try Db.find("select * from student where age > ?", arguments: [12])
/// let jack = try Db.findFirst("select * from student where name = :name", arguments: ["name": "Jack"])
/// let values: [DatabaseArgument] = [12, "Jack"]
/// let rows = try Db.find("select * from student where age > ? and name = ?", arguments: StatementArguments(values))
/// ```
public struct StatementArguments: Sendable, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral {
    let storage: Arguments

    /// Positional arguments, bound in order to the `?` placeholders (`?NNN` takes the NNNth).
    /// ```swift
    /// let values: [DatabaseArgument] = ["Jack", 14]
    /// try Db.update("insert into student(name, age) values (?, ?)", arguments: StatementArguments(values))
    /// ```
    public init(_ values: [DatabaseArgument]) {
        storage = .positional(values)
    }

    /// Named arguments, bound to the `:name`, `@name` or `$name` placeholders.
    /// ```swift
    /// let named: [String: DatabaseArgument] = ["age": 14, "id": 15]
    /// try Db.update("update student set age = :age where id = :id", arguments: StatementArguments(named))
    /// ```
    public init(_ named: [String: DatabaseArgument]) {
        storage = .named(named)
    }

    /// Positional arguments from an array literal.
    /// ```swift
    /// let arguments: StatementArguments = [12, "Jack"]
    /// ```
    public init(arrayLiteral elements: DatabaseArgument...) {
        storage = .positional(elements)
    }

    /// Named arguments from a dictionary literal (a name must appear once, as in a `Dictionary` literal).
    /// ```swift
    /// let arguments: StatementArguments = ["age": 12, "name": "Jack"]
    /// ```
    public init(dictionaryLiteral elements: (String, DatabaseArgument)...) {
        storage = .named(Dictionary(uniqueKeysWithValues: elements))
    }
}
