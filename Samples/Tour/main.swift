import DicRecord
import Foundation
let dir = FileManager.default.temporaryDirectory.appendingPathComponent("smoke-\(UUID())")
let ctx = try DbContext(path: dir.appendingPathComponent("db/main.sqlite").path)
try ctx.start()
try Db.update("create table student(id integer primary key autoincrement, name text, age integer, born real)")
try Db.batch("insert into student(name, age, born) values (?, ?, ?)", (0..<20).map { ["张\($0)", $0, Date(timeIntervalSince1970: 1_000_000 + Double($0))] })
let rows = try Db.find("select * from student where age > ?", 15)
print(rows.count, rows.first as Any)
let r = rows[0]
let name: String? = r.name
let born: Date? = r.born
print(name as Any, born as Any, r.name as Any, r.columnNames)
r.age = 99
print(r.modifiedColumns, try Db.update("student", r), try Db.queryInt("select age from student where id = ?", r.id))
let page = try Db.paginate(2, 10, "select *", "from student order by id")
print(page.totalRow, page.totalPage, page.list.count, page.isLastPage)
let ok = try Db.tx { db in try db.update("delete from student"); return false }
print(ok, try Db.queryInt("select count(*) from student") as Any)
do { try Db.find("selec x") } catch { print(error) }
do { try Db.find("select * from student where id = ?") } catch { print(error) }
do { _ = try Db.use("nope").find("select 1") } catch { print(error) }
let n = try Record(["name": "Jack", "age": 40, "when": Date(timeIntervalSince1970: 0)])
print(n, try n.toJSON())
print(try Record(json: #"{"name": "张三", "age": 14, "born": 1020873600, "tags": [1,2]}"#))
var count = 0
try Db.each("select * from student") { _ in count += 1; return true }
print("each", count)
ctx.stop()
