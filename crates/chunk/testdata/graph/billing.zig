const std = @import("std");
const money = @import("support/money.zig");

pub const Invoice = struct {
    lines: []const u64,
    pub fn total(self: Invoice) u64 {
        return money.sum(self.lines);
    }
};

pub fn main() void {
    const inv = Invoice{ .lines = &.{} };
    std.debug.print("{}\n", .{inv.total()});
}
