import 'package:acme/support/money.dart';
import 'dart:math' as math;
import '../util.dart' show helper;

class Invoice extends Document with Logs implements Billable {
  final List<int> lines = [];

  int total() {
    final sum = Money.sum(lines);
    return helper(math.max(sum, 0));
  }
}

void main() {
  print(Invoice().total());
}
