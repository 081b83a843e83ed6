package com.acme.billing

import com.acme.support.Money
import com.acme.support.Clock as Time
import kotlinx.coroutines.*

/** Something that can be billed. */
interface Billable {
    fun total(): Money
}

@Serializable
data class Invoice(val number: String) : Document(), Billable {
    private val lines = mutableListOf<Money>()

    constructor() : this("0")

    /** The sum of the lines. */
    override fun total(): Money = Money.sum(lines)

    companion object {
        fun blank(): Invoice = Invoice()
    }
}

enum class Status { DRAFT, PAID }

object Registry {
    fun find(number: String): Invoice? = null
}

typealias Amount = Long

fun Invoice.print(): String {
    return "Invoice $number"
}

fun main() {
    println(Invoice.blank().print())
}
