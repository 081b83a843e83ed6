require "json"
require_relative "models/cart"
require_relative "../lib/pricing.rb"

class Checkout < Base::Service
  def total(cart)
    prices = Pricing.lookup(cart.items)
    apply_discount(prices.sum)
  end
end
