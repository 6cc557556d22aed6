import Foundation

/// A benchmark's command line: `NAME [workload…] [--quick] [--only TEXT[,TEXT…]]`. Prints the
/// usage and exits 0 for -h, exits 2 on an unknown argument.
public struct BenchArguments {
    public let quick: Bool
    /// `--scaling`: the program's scaling run instead of its workloads (where it has one).
    public let scaling: Bool
    /// Implementations to run (names containing one of these), nil for all.
    public let only: [String]?
    /// The workloads named; none means all.
    public let chosen: [String]

    public init(program: String, workloads: [String], arguments: [String] = Array(CommandLine.arguments.dropFirst())) {
        var quick = false
        var scaling = false
        var only: [String]?
        var chosen: [String] = []
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            switch argument {
            case "--quick":
                quick = true
            case "--scaling":
                scaling = true
            case "--only":
                only = rest.popFirst().map { $0.split(separator: ",").map(String.init) }
            case "-h", "--help":
                print("usage: \(program) [workload…] [--quick] [--only TEXT[,TEXT…]] [--scaling]\nworkloads: \(workloads.joined(separator: " "))")
                exit(0)
            case _ where workloads.contains(argument):
                chosen.append(argument)
            default:
                FileHandle.standardError.write(Data("\(program): unknown argument '\(argument)'; workloads: \(workloads.joined(separator: " "))\n".utf8))
                exit(2)
            }
        }
        self.quick = quick
        self.scaling = scaling
        self.only = only
        self.chosen = chosen
    }

    /// Whether `workload` runs.
    public func selected(_ workload: String) -> Bool { chosen.isEmpty || chosen.contains(workload) }
}
