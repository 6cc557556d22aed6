// Your own type in SQLite through a TypeConverter: `swift run custom-converter`.
//
// Money is stored as INTEGER cents, never as a lossy REAL, so SQL can add it up exactly. The
// converter is registered once, globally; a second context overrides it with its own. Records,
// query arguments, single-value queries and a model's @Column all go through it, and a value it
// cannot convert is a thrown error that says which value, which column and why.
import DicRecord
import Foundation

/// An amount of money: whole cents and an ISO 4217 currency code.
struct Money: Sendable, Equatable, CustomStringConvertible {
    var cents: Int64
    var currency: String
    var description: String {
        let fraction = String(abs(cents) % 100)
        return "\(cents < 0 ? "-" : "")\(abs(cents) / 100).\(fraction.count == 1 ? "0" + fraction : fraction) \(currency)"
    }
}

/// Stores Money as INTEGER cents. A database keeps one currency, so the converter knows it: it
/// refuses to store another currency (the cents alone could not tell them apart on the way back).
struct MoneyConverter: TypeConverter {
    let currency: String

    var storageType: StorageType { .integer }      // the column type in CREATE TABLE for a Money column

    func encode(_ value: Money) throws -> DatabaseValue {
        guard value.currency == currency else {
            throw ConversionError.cannotEncode(value, "this database stores \(currency) amounts only")
        }
        return .integer(value.cents)
    }

    func decode(_ value: DatabaseValue) throws -> Money {   // never called with NULL: that is nil
        guard case .integer(let cents) = value else {
            throw ConversionError.cannotDecode(value, to: Money.self, "expected INTEGER cents")
        }
        return Money(cents: cents, currency: currency)
    }
}

/// A model with a Money column: its type comes from the converter (INTEGER), NULL reads as nil.
final class Product: Model {
    @Column var name: String?
    @Column var price: Money?
}

/// A type with no converter, to show the error for it.
struct Coupon: Sendable {
    var code: String
}

struct CheckFailed: Error, CustomStringConvertible {
    let description: String
}

func check(_ condition: Bool, _ message: @autoclosure () -> String) throws {
    guard condition else { throw CheckFailed(description: "check failed: " + message()) }
}

func say(_ text: String) { print("\n▸ " + text) }

/// Runs `body`, which must throw; prints the error (the point of the step) and returns it.
@discardableResult
func expectError(_ what: String, _ body: () throws -> Void) throws -> any Error {
    do {
        try body()
    } catch {
        print("  \(what): \(error)")
        return error
    }
    throw CheckFailed(description: "check failed: \(what) should have thrown")
}

func run(in folder: URL) throws {
    say("Register the converter globally: every context, record and model now knows Money.")
    Converters.register(MoneyConverter(currency: "EUR"))

    let main = try DbContext(path: folder.appendingPathComponent("shop.sqlite").path)
    main.register(Product.self)          // a model column's converter must be registered globally
    try main.start()
    defer { main.stop() }
    let productTable = try Db.queryString("select sql from sqlite_master where name = 'Product'") ?? "-"
    print("  the model's table:", productTable)
    try check(productTable.contains("\"price\" INTEGER") || productTable.contains("price INTEGER"), "price should be an INTEGER column")

    say("Records: Money as a query argument and as a record value, read back typed.")
    try Db.update("create table payment(id integer primary key autoincrement, label text, amount integer)")
    try Db.update("insert into payment(label, amount) values (?, ?)", "coffee", Money(cents: 350, currency: "EUR"))
    let lunch = try Record(["label": "lunch", "amount": Money(cents: 1_290, currency: "EUR")])
    try Db.save("payment", lunch)
    for row in try Db.find("select id, label, amount, typeof(amount) stored from payment order by id") {
        let amount: Money? = row.amount                   // INTEGER cents -> Money, through the converter
        print("  #\(row.id ?? 0) \(row.label ?? "-"): \(amount.map { "\($0)" } ?? "-") (stored as \(row.stored ?? "-"))")
    }
    let total = try Db.queryFirst("select sum(amount) from payment", as: Money.self)
    print("  sum(amount) in SQL, read as Money:", total.map { "\($0)" } ?? "-")
    try check(total == Money(cents: 1_640, currency: "EUR"), "the payments should add up to 16.40 EUR")

    say("A model with @Column var price: Money?")
    for (name, cents) in [("pen", Int64(199)), ("notebook", 450), ("backpack", 3_999)] {
        let p = Product(); p.name = name; p.price = Money(cents: cents, currency: "EUR")
        try p.save()
    }
    let free = Product(); free.name = "sticker"; free.price = nil          // NULL, read back as nil
    try free.save()
    for p in try Product.dao.find("select * from Product order by price desc nulls last") {
        print("  \(p.name ?? "-"): \(p.price.map { "\($0)" } ?? "no price")")
    }
    let cheap = try Product.dao.findByCondition("price < ?", Money(cents: 500, currency: "EUR"))   // Money as an argument
    print("  under 5.00 EUR:", cheap.compactMap(\.name))
    let stock = try Product.dao.sum("price", as: Money.self)
    print("  dao.sum(\"price\"):", stock.map { "\($0)" } ?? "-")
    try check(cheap.count == 2, "two products should cost under 5 EUR")
    try check(stock == Money(cents: 4_648, currency: "EUR"), "the prices should add up to 46.48 EUR")

    say("A per-context converter wins over the global one in that context only.")
    let us = try DbContext(path: folder.appendingPathComponent("us-shop.sqlite").path, configName: "us")
    us.register(converter: MoneyConverter(currency: "USD"))
    try us.start()
    defer { us.stop() }
    let usDb = Db.use("us")
    try usDb.update("create table payment(id integer primary key autoincrement, label text, amount integer)")
    try usDb.update("insert into payment(label, amount) values (?, ?)", "bagel", Money(cents: 275, currency: "USD"))
    let bagel = try usDb.queryFirst("select amount from payment", as: Money.self)
    print("  in \"us\":", bagel.map { "\($0)" } ?? "-", "| in main, still:", total.map { "\($0)" } ?? "-")
    try check(bagel?.currency == "USD", "the us context should read dollars")

    say("Values that cannot be converted are thrown errors that say why, never a crash.")
    // Encoding: main's converter refuses dollars.
    try expectError("dollars into main") {
        try Db.update("insert into payment(label, amount) values (?, ?)", "taxi", Money(cents: 2_000, currency: "USD"))
    }
    let taxi = Product(); taxi.name = "taxi"; taxi.price = Money(cents: 2_000, currency: "USD")
    try expectError("a model saved with dollars") { try taxi.save() }
    // Decoding: a value written behind the converter's back.
    try Db.update("insert into payment(label, amount) values ('refund', 'twelve euros')")
    guard let refund = try Db.findFirst("select * from payment where label = 'refund'") else {
        throw CheckFailed(description: "check failed: the refund row should exist")
    }
    let lenient: Money? = refund.amount                    // a typed read gives nil on bad data ...
    print("  refund.amount as Money?:", lenient.map { "\($0)" } ?? "nil")
    try expectError("refund.get(\"amount\", as: Money.self)") {   // ... get(_:as:) says why
        _ = try refund.get("amount", as: Money.self)
    }
    // A type nobody registered a converter for.
    let error = try expectError("a Coupon as an argument") {
        try Db.update("insert into payment(label, amount) values (?, ?)", "coupon", Coupon(code: "SPRING"))
    }
    try check("\(error)".contains("Coupon"), "the error should name the type")
    try check(try Db.queryInt("select count(*) from payment") == 3, "nothing refused should have been written")
}

let folder = FileManager.default.temporaryDirectory.appendingPathComponent("dicrecord-converter-\(UUID().uuidString)")
var failed = false
do {
    try run(in: folder)
    say("Done.")
} catch {
    FileHandle.standardError.write(Data("custom-converter failed: \(error)\n".utf8))
    failed = true
}
try? FileManager.default.removeItem(at: folder)
exit(failed ? 1 : 0)
