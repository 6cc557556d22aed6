/// A statement and its arguments, to run later or in a batch (PSDicRecord's PSSql).
///
/// ```swift
/// try Db.batch([Sql("insert into t(a) values (?)", 1), Sql("delete from t where a = :a", arguments: ["a": 2])])
/// ```
public struct Sql: Sendable, CustomStringConvertible {
    public let sql: String
    let arguments: Arguments

    public init(_ sql: String, _ args: DatabaseArgument...) {
        self.init(sql, arguments: args)
    }

    public init(_ sql: String, arguments: [DatabaseArgument]) {
        self.sql = sql
        self.arguments = .positional(arguments)
    }

    public init(_ sql: String, arguments: [String: DatabaseArgument]) {
        self.sql = sql
        self.arguments = .named(arguments)
    }

    init(_ sql: String, values: [DatabaseValue]) {
        self.sql = sql
        self.arguments = .values(values)
    }

    public var description: String { sql }
}

/// One page of results (JFinal's Page): page numbers start at 1.
public struct Page<T> {
    public let list: [T]
    public let pageNumber: Int
    public let pageSize: Int
    public let totalPage: Int
    public let totalRow: Int

    public init(list: [T], pageNumber: Int, pageSize: Int, totalPage: Int, totalRow: Int) {
        self.list = list
        self.pageNumber = pageNumber
        self.pageSize = pageSize
        self.totalPage = totalPage
        self.totalRow = totalRow
    }

    public var isFirstPage: Bool { pageNumber == 1 }
    public var isLastPage: Bool { pageNumber >= totalPage }
}

/// A page of records (or of any Sendable values) may cross tasks; a page of models may not.
extension Page: Sendable where T: Sendable {}

/// One page of a keyset ("seek") pagination: the rows after a key, in key order.
///
/// Pass `nextKey` to get the following page; it is nil on the last page. Unlike OFFSET paging,
/// the cost of a page does not grow with its depth, and no count is needed.
public struct KeysetPage<T: Sendable>: Sendable {
    public let list: [T]
    /// The key of the last row, to pass as `after:` for the next page; nil when there is none.
    public let nextKey: DatabaseValue?

    public init(list: [T], nextKey: DatabaseValue?) {
        self.list = list
        self.nextKey = nextKey
    }

    public var isLastPage: Bool { nextKey == nil }
}
