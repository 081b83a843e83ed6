using System;
using System.Collections.Generic;

namespace Acme.Billing
{
    /// <summary>Something that can be billed.</summary>
    public interface IBillable
    {
        decimal Total { get; }
    }

    [Serializable]
    public sealed class Invoice : Document, IBillable
    {
        private readonly List<decimal> _lines = new();

        public Invoice(string number)
        {
            Number = number;
        }

        public string Number { get; }

        /// <summary>The sum of the lines.</summary>
        public decimal Total => Sum(_lines);

        public static Invoice Blank() => new Invoice("0");
    }

    public record Line(string Sku, decimal Amount);

    public struct Money
    {
        public decimal Amount;
    }

    public enum Status { Draft, Paid }

    public delegate void Paid(Invoice invoice);
}
