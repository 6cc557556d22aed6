/// A statement and its arguments, to run later or in a batch (PSDicRecord's PSSql).
///
/// ```swift
/// try Db.batch([Sql("insert into t(a) values (?)", 1), Sql("delete from t where a = :a", arguments: ["a": 2])])
/// ```
public struct Sql: Sendable, CustomStringConvertible {
    /// The SQL text, placeholders included.
    /// ```swift
    /// Sql("delete from student where id = ?", 15).sql   // "delete from student where id = ?"
    /// ```
    public let sql: String
    let arguments: Arguments

    /// A statement with variadic arguments, bound in order to its `?` placeholders.
    /// ```swift
    /// let insert = Sql("insert into student(name, age) values (?, ?)", "Jack", 14)
    /// ```
    public init(_ sql: String, _ args: DatabaseArgument...) {
        self.init(sql, arguments: .init(args))
    }

    /// A statement with its arguments given as an array or by name.
    /// ```swift
    /// let insert = Sql("insert into student(name, age) values (?, ?)", arguments: ["Jack", 14])
    /// let rename = Sql("update student set name = :name where id = :id", arguments: ["name": "Rose", "id": 15])
    /// ```
    public init(_ sql: String, arguments: StatementArguments) {
        self.sql = sql
        self.arguments = arguments.storage
    }

    init(_ sql: String, values: [DatabaseValue]) {
        self.sql = sql
        self.arguments = .values(values)
    }

    /// The SQL text (arguments are not included).
    /// ```swift
    /// print(Sql("delete from student where age < ?", 6))   // delete from student where age < ?
    /// ```
    public var description: String { sql }
}

/// One page of results (JFinal's Page): page numbers start at 1.
///
/// ```swift
/// let page = try Db.paginate(2, 10, "select *", "from student order by name")
/// for student in page.list { print(student.name as Any) }
/// ```
public struct Page<T> {
    /// The rows of this page; empty beyond the last page.
    /// ```swift
    /// for student in page.list { print(student.name as Any) }
    /// ```
    public let list: [T]
    /// The page number, starting at 1.
    /// ```swift
    /// page.pageNumber   // 2
    /// ```
    public let pageNumber: Int
    /// The page size asked for; the last page may hold fewer rows.
    /// ```swift
    /// page.pageSize     // 10
    /// ```
    public let pageSize: Int
    /// The number of pages: `totalRow` divided by `pageSize`, rounded up.
    /// ```swift
    /// page.totalPage    // 25 for 245 rows of 10
    /// ```
    public let totalPage: Int
    /// The number of rows of the whole query, all pages together.
    /// ```swift
    /// page.totalRow     // 245
    /// ```
    public let totalRow: Int

    /// A page made of its parts, for a page you build yourself (tests, a cache, a mapped page).
    /// ```swift
    /// let page = Page(list: [jack, rose], pageNumber: 1, pageSize: 10, totalPage: 1, totalRow: 2)
    /// ```
    public init(list: [T], pageNumber: Int, pageSize: Int, totalPage: Int, totalRow: Int) {
        self.list = list
        self.pageNumber = pageNumber
        self.pageSize = pageSize
        self.totalPage = totalPage
        self.totalRow = totalRow
    }

    /// True for page 1.
    /// ```swift
    /// if page.isFirstPage { print("first page") }
    /// ```
    public var isFirstPage: Bool { pageNumber == 1 }
    /// True for the last page and for any page beyond it (also when there are no rows at all).
    /// ```swift
    /// if !page.isLastPage { next = try Db.paginate(page.pageNumber + 1, 10, "select *", "from student") }
    /// ```
    public var isLastPage: Bool { pageNumber >= totalPage }
}

/// A page of records (or of any Sendable values) may cross tasks; a page of models may not.
extension Page: Sendable where T: Sendable {}

/// One page of a keyset ("seek") pagination: the rows after a key, in key order.
///
/// Pass `nextKey` to get the following page; it is nil on the last page. Unlike OFFSET paging,
/// the cost of a page does not grow with its depth, and no count is needed.
///
/// ```swift
/// let first = try Db.paginate(after: nil, 20, "select *", "from student")
/// let second = try Db.paginate(after: first.nextKey, 20, "select *", "from student")
/// ```
public struct KeysetPage<T: Sendable>: Sendable {
    /// The rows of this page, in key order; at most the page size.
    /// ```swift
    /// for student in page.list { print(student.name as Any) }
    /// ```
    public let list: [T]
    /// The key of the last row, to pass as `after:` for the next page; nil when there is none.
    /// ```swift
    /// let next = try Db.paginate(after: page.nextKey, 20, "select *", "from student")
    /// ```
    public let nextKey: DatabaseValue?

    /// A keyset page made of its parts, for a page you build yourself.
    /// ```swift
    /// let empty = KeysetPage<Record>(list: [], nextKey: nil)
    /// ```
    public init(list: [T], nextKey: DatabaseValue?) {
        self.list = list
        self.nextKey = nextKey
    }

    /// True when there is no page after this one (`nextKey` is nil).
    /// ```swift
    /// while !page.isLastPage { page = try Db.paginate(after: page.nextKey, 20, "select *", "from student") }
    /// ```
    public var isLastPage: Bool { nextKey == nil }
}
