(** Invoices and their totals. *)

type invoice

(** Total of an invoice, shipping included. *)
val total : invoice -> int

module Ledger : sig
  type t
  val add : t -> invoice -> unit
end

val settle : invoice -> unit
(** Marks an invoice as paid: the comment below a [val] documents it,
    as ocamldoc reads it. *)

type status
  (** Whether an invoice is paid. *)
