(** Invoices and their totals. *)

type invoice

(** Total of an invoice, shipping included. *)
val total : invoice -> int

module Ledger : sig
  type t
  val add : t -> invoice -> unit
end
