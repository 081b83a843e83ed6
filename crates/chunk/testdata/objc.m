#import <Foundation/Foundation.h>
#import "Invoice.h"
@import UIKit;

/// Ways an invoice can be settled.
typedef NS_ENUM(NSInteger, PaymentMethod) {
    PaymentMethodCard,
    PaymentMethodCash,
};

@protocol Printable <NSObject>
- (NSString *)render;
@end

/// An invoice with its lines.
@interface Ledger : NSObject <Printable>
@property (nonatomic, copy) NSString *name;
- (void)addInvoice:(Invoice *)invoice paidWith:(PaymentMethod)method;
+ (instancetype)sharedLedger;
@end

@interface Ledger (Totals)
- (NSInteger)total;
@end

static NSInteger sum(NSArray *values) {
    NSInteger total = 0;
    for (NSNumber *n in values) total += n.integerValue;
    return total;
}

@implementation Ledger

/// Adds an invoice, remembering how it was paid.
- (void)addInvoice:(Invoice *)invoice paidWith:(PaymentMethod)method {
    [self.invoices addObject:invoice];
    [invoice markPaid:method];
}

+ (instancetype)sharedLedger {
    static Ledger *shared = nil;
    return shared;
}

- (NSString *)render {
    return [NSString stringWithFormat:@"%ld", (long)sum(self.invoices)];
}

@end

@interface Ledger ()
@property (nonatomic) NSInteger count;
@end
