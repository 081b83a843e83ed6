#include <vector>

namespace geo {

/// A shape.
class Shape {
public:
    Shape();

    double area() const {
        return w_ * h_;
    }

private:
    double w_, h_;
};

Shape::Shape() : w_(0), h_(0) {}

template <typename T>
T clamp(T v, T lo, T hi) {
    return v < lo ? lo : v > hi ? hi : v;
}

}  // namespace geo

double geo::Shape::perimeter() const {
    return 2 * (w_ + h_);
}
