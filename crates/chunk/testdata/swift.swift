import Foundation
import class UIKit.UIView

/// Something that can be billed.
protocol Billable {
    func total() -> Int
}

/// An invoice.
@available(iOS 13, *)
final class Invoice: Document, Billable {
    let number: String

    init(number: String) {
        self.number = number
    }

    /// The sum of the lines.
    func total() -> Int {
        return Money.sum(lines)
    }
}

struct Line {
    var cents: Int
    func doubled() -> Line { Line(cents: cents * 2) }
}

enum Status {
    case draft, paid
    func label() -> String { "x" }
}

extension Invoice: CustomStringConvertible {
    var description: String { number }
    func describe() -> String {
        return Formatter.shared.format(self)
    }
}

typealias Amount = Int

func main() {
    print(Invoice(number: "1").total())
}
