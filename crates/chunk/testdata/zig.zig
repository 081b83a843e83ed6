const std = @import("std");
const money = @import("support/money.zig");

/// An invoice.
pub const Invoice = struct {
    number: u32,
    lines: []const u64,

    /// The sum of the lines.
    pub fn total(self: Invoice) u64 {
        return money.sum(self.lines);
    }
};

pub const Status = enum { draft, paid };

const Value = union(enum) { int: i64, float: f64 };

/// Entry point.
pub fn main() !void {
    const inv = Invoice{ .number = 1, .lines = &.{} };
    std.debug.print("{}\n", .{inv.total()});
}

test "total of nothing" {
    try std.testing.expectEqual(@as(u64, 0), (Invoice{ .number = 1, .lines = &.{} }).total());
}
