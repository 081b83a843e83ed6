import 'package:acme/support/money.dart';
import 'dart:math' as math;
import '../util.dart' show helper;

/// Something that can be billed.
abstract class Billable {
  int total();
}

/// An invoice.
@immutable
class Invoice extends Document with Logs implements Billable {
  final String number;

  Invoice(this.number);

  Invoice.blank() : number = '0';

  factory Invoice.parse(String s) => Invoice(s);

  /// The sum of the lines.
  @override
  int total() {
    return Money.sum(lines);
  }

  String get label => number;
}

mixin Logs {
  void log(String m) => print(m);
}

extension Describe on Invoice {
  String describe() => 'invoice $number';
}

enum Status { draft, paid }

typedef Amount = int;

int add(int a, int b) => a + b;

void main() {
  print(Invoice('1').total());
}
