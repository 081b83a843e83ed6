open Printf
module S = Support.Money

(** An invoice: its lines, in cents. *)
type invoice = { lines : int list; customer : string }

type status = Open | Paid of int

exception Unpaid of string

let shipping inv = if List.length inv.lines > 3 then 0 else 450

(** Total of an invoice, shipping included. *)
let total inv =
  List.fold_left ( + ) 0 inv.lines + shipping inv

let rec even n = n = 0 || odd (n - 1)
and odd n = n <> 0 && even (n - 1)

let max_lines = 100

module Ledger = struct
  type t = { mutable entries : invoice list }

  let add ledger inv = ledger.entries <- inv :: ledger.entries

  let settle ledger = S.zero ledger
end

module type PRINTABLE = sig
  val render : invoice -> string
end

class printer = object (self)
  inherit Base.formatter
  method print inv = printf "%d\n" (total inv)
end

let () = print_endline (string_of_int (total { lines = [1]; customer = "a" }))
