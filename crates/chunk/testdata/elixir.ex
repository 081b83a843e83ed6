defmodule Acme.Billing.Invoice do
  @moduledoc """
  Invoices of one customer.
  """

  alias Acme.Support.{Money, Clock}
  import Acme.Format, only: [cents: 1]
  require Logger

  defstruct number: nil, lines: []

  @doc "The sum of the lines."
  @spec total(t()) :: Money.t()
  def total(%__MODULE__{lines: lines}) do
    Money.sum(lines)
  end

  def blank, do: %__MODULE__{number: "0"}

  defp log(invoice) when is_map(invoice) do
    Logger.info(cents(total(invoice)))
  end

  defmacro paid?(invoice) do
    quote do: unquote(invoice).paid
  end
end

defprotocol Acme.Billable do
  def amount(item)
end

defimpl Acme.Billable, for: Acme.Billing.Invoice do
  def amount(invoice), do: Acme.Billing.Invoice.total(invoice)
end

defmodule Acme.Store do
  @moduledoc "Where invoices are kept."

  @doc "Saves an invoice."
  @callback save(invoice :: term) :: :ok | {:error, term}

  @macrocallback query(expr) :: Macro.t() when expr: Macro.t()
  @callback count :: non_neg_integer

  def default, do: Acme.Store.Memory
end
