import Foundation

/// Anything DicRecord can bind as an argument: a value whose type has a converter, or nil for NULL.
/// ```swift
/// let age: DatabaseArgument = 14
/// try Db.update("update student set age = ? where id = ?", age, 15)
/// ```
public typealias DatabaseArgument = (any Sendable)?
