require "json"
require_relative "support/money"

# Billing for accounts.
module Billing
  # An invoice of one customer.
  class Invoice < Record
    attr_reader :number
    attr_accessor :lines, :due

    # Builds an empty invoice.
    def initialize(number)
      @number = number
      @lines = []
    end

    def total
      lines.sum(&:amount)
    end

    def self.parse(text)
      new(JSON.parse(text)["number"])
    end

    class << self
      def blank
        new(0)
      end
    end
  end

  def self.currency
    "EUR"
  end
end

class Billing::Reminder
  def send_to(customer)
    Mailer.deliver(customer, self)
  end
end

def Billing.helper; end

def main
  puts Billing::Invoice.new(1).total
end
