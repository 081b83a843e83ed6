#!/bin/sh
# Print the commands that fetch the repositories this question set is
# labelled against, each checked out at the commit recorded in the JSONL
# files. Nothing is downloaded by this script; run its output yourself.
#
# Usage: bench/questions/fetch.sh URL_BASE DEST [SET]
#   URL_BASE  e.g. https://github.com (or a local mirror with owner/name.git)
#   DEST      directory that will hold one clone per repository
#   SET       own (cobra, flask, ripgrep, express), langs (the per-language
#             repositories), new (the nine sets of the forty-third session),
#             heldout (gin, kept aside) or all (default)
# Example:
#   bench/questions/fetch.sh https://github.com /tmp/bench-repos | sh
#   # the layout bench/sets.py expects (--repos DIR):
#   bench/questions/fetch.sh https://github.com DIR/own own | sh
#   bench/questions/fetch.sh https://github.com DIR/langs langs | sh
set -eu
if [ $# -lt 2 ] || [ $# -gt 3 ]; then
    echo "usage: $0 URL_BASE DEST [own|langs|all]" >&2
    exit 2
fi
base=${1%/}
dest=${2%/}
want=${3:-all}
case $want in own|langs|new|heldout|all) ;; *) echo "unknown set: $want" >&2; exit 2 ;; esac
# set  name  owner/repo  commit   (must match the "commit" field of NAME.jsonl)
while read -r set name repo commit; do
    [ "$want" = all ] || [ "$want" = "$set" ] || continue
    echo "git clone $base/$repo.git $dest/$name"
    echo "git -C $dest/$name checkout --detach $commit"
done <<'LIST'
own cobra spf13/cobra adbc8813901bba65827259daa8e22ff94ec1f30e
own flask pallets/flask 2ac89889f4cc330eabd50f295dcef02828522c69
own ripgrep BurntSushi/ripgrep 3fce3b5bb0236da2df6d99672afb8a719642eca7
own express expressjs/express a3714473feb3d2908add734d340e7755fd85e0a3
own hono honojs/hono 28a9c128912de19f3fb28b00ae289c9b93f6f392
own jsoup jhy/jsoup 46b620860af930eedc193a705eaf7cea5aec89a6
langs sinatra sinatra/sinatra cb22afd7902b566b6eaba6c4ea89739494a65d12
langs koin InsertKoinIO/koin fff5291f333c04fe5d6d9447f72740647d40d186
langs plug elixir-plug/plug a898c454a04ca5ffad306bd751a15c7ac9ff6927
langs slim slimphp/Slim 038fd5713d5a41636fdff0e8dcceedecdd17fc17
langs serilog serilog/serilog 60935b4d7abad71cf6157b45a10f5c3c65ead527
langs alamofire Alamofire/Alamofire 7595cbcf59809f9977c5f6378500de2ad73b7ddb
langs mainargs com-lihaoyi/mainargs 12b72ef6ed166c97a84a876411453bcab797880c
langs lazy folke/lazy.nvim 306a05526ada86a7b30af95c5cc81ffba93fef97
langs shelf dart-lang/shelf fb3f931d2c158d794e83c1b76b7be4b625db3c28
langs hakyll jaspervdj/hakyll 00fcf9b0b1267623c521a1ba0887c53d873539d4
langs bats bats-core/bats-core d22e41faad59f5fd942a88c992b4913a27a460c4
langs newtonsoft JamesNK/Newtonsoft.Json 09bb545d72969ad7fb4ea07db0d5c34f4fc07877
langs mockk mockk/mockk 0c2932be9adb347e35a1b96ca3115435b353d595
langs pyenv pyenv/pyenv bec9a562a59e48a730fe3320fe90c6999c82886c
langs cowboy ninenines/cowboy 5c8535f409aa2fd49deb355e8ee43d5c06eb1c90
langs httpzig karlseguin/http.zig 86a44b63bda353338f2dbddc35eeb260f0f5c299
langs afnetworking AFNetworking/AFNetworking d9f589cc2c1fe9d55eb5eea00558010afea7a41e
langs lwt ocsigen/lwt a735b669c717d5f63a99ec105c1c7f500109acdd
langs munit scalameta/munit db8ab135f13f8ad32b5b357a5b74fcb8082ab6e7
langs libuv libuv/libuv 6179e7af87413396d5853a1c3722c8b5749336c8
langs httpjl JuliaWeb/HTTP.jl 444b92b5df2d3d38793fccc50a67e3b5a498d3ec
langs fmt fmtlib/fmt 60ccad511fd680cb91d8b60a315759f71c67bef9
langs rack rack/rack 8bf4eb078498edc9105fb04add80d89c5340e60b
langs ecto elixir-ecto/ecto c624abf4297b27589a5a7351b55feb2316f61e1c
langs kingfisher onevcat/Kingfisher 410984bf301f4fa224fe56277b3f8672cc465c79
new seaborn mwaskom/seaborn f04b6cd5484267a0885d1fed068e99dff3a1b226
new fzf junegunn/fzf 956562daaa82ddf55ea8f7aeab56883377b742c6
new lumen laravel/lumen-framework ef69ade5f0131d2ae1f511b3c075eeff24fd8b15
new nancy NancyFx/Nancy e523defb12f5ea3ec7b7129ed2b4aaf70aebed2f
new chibicc rui314/chibicc 90d1f7f199cc55b13c7fdb5839d1409806633fdb
new fd sharkdp/fd ee20f426ddf338ac7ead5c5f00ea49258005caaf
new zod colinhacks/zod e516c3baf22615e20934116abebfed6c000222c2
new gson google/gson 9835b6f90192f79cdf5300c528fc6212455fb6c1
new starlette encode/starlette cb8f84f5284dc301ca7a31eb732b9e140769dd48
heldout gin gin-gonic/gin dcaa4296d111981ffb31ac3eba90bb63e1eb5ab9
LIST
