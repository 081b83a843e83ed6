package com.acme.billing

import com.acme.support.{Money, Clock => Time}
import scala.collection.mutable._

/** Something that can be billed. */
trait Billable {
  def total: Money
}

@SerialVersionUID(1L)
case class Invoice(number: String, lines: List[Money]) extends Document with Billable {
  private val cache = mutable.Map.empty[String, Money]

  /** The sum of the lines. */
  def total: Money = Money.sum(lines)

  override def toString: String = s"Invoice($number)"
}

object Invoice {
  def blank(): Invoice = new Invoice("0", Nil)
}

enum Status {
  case Draft, Paid
}

type Amount = Long

def format(i: Invoice): String =
  i.total.toString
