module Billing

using LinearAlgebra
import Base: show
include("money.jl")

export Invoice, total

"""
    Invoice(lines)

An invoice: its lines, in cents.
"""
struct Invoice <: AbstractDocument
    lines::Vector{Int}
end

mutable struct Ledger
    entries::Vector{Invoice}
end

abstract type AbstractDocument end

"Total of an invoice, shipping included."
function total(inv::Invoice)
    sum(inv.lines) + shipping(inv)
end

shipping(inv::Invoice) = length(inv.lines) > 3 ? 0 : 450

Base.show(io::IO, inv::Invoice) = print(io, "Invoice(", total(inv), ")")

macro cents(x)
    :($(esc(x)) * 100)
end

const MAX_LINES = 100

end

@testset "totals" begin
    @test total(Invoice([1, 2])) == 453
end
