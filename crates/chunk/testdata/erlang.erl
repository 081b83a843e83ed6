%% @doc Invoices and their totals.
-module(invoice).
-behaviour(gen_server).
-export([total/1, settle/2]).
-import(money, [add/2]).
-include("records.hrl").

-record(line, {sku :: binary(), cents = 0 :: integer()}).
-type status() :: open | paid.
-define(SHIPPING, 450).

%% @doc The total of the lines, shipping included.
-spec total([#line{}]) -> integer().
total([]) ->
    ?SHIPPING;
total([#line{cents = C} | Rest]) ->
    add(C, total(Rest)).

settle(Invoice, Method) ->
    ledger:record(Invoice, Method),
    {ok, paid}.

init(Args) -> {ok, Args}.

-callback handle(Req :: term()) -> {ok, term()}.
-callback handle(Req :: term(), Opts :: map()) -> {ok, term()}.
