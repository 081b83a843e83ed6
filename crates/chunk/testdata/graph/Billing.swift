import Foundation
@testable import Support
import class UIKit.UIView

final class Invoice: Document, Billable {
    func total() -> Int {
        let sum = Money.sum(lines)
        log(Clock.now())
        return Currency(code: "EUR").convert(sum)
    }
}

extension Invoice: CustomStringConvertible {
    var description: String { format(self) }
}
