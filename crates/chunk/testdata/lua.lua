local json = require("json")
local util = require "shop.util"

--- A shopping cart.
local Cart = {}
Cart.__index = Cart

--- Makes an empty cart.
function Cart.new(owner)
  return setmetatable({ owner = owner, items = {} }, Cart)
end

function Cart:add(item)
  table.insert(self.items, item)
end

Cart.total = function(self)
  return util.sum(self.items)
end

local function encode(cart)
  return json.encode(cart)
end

local decode = function(text)
  return json.decode(text)
end

return Cart
