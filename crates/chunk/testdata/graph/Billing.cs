using System;
using Acme.Support;
using Json = System.Text.Json.JsonSerializer;
using static System.Math;

namespace Acme.Billing;

public class Invoice : Document, IBillable, IComparable<Invoice>
{
    public decimal Total(Money money)
    {
        var sum = Lines.Sum();
        Log(Json.Serialize(sum));
        return Round(Money.Of<decimal>(sum) + new Currency("EUR").Rate);
    }
}

public record Line(string Sku) : Entry(Sku);
