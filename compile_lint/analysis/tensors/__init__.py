"""What tensor code computes, as far as can be known without running it: which
expressions are tensors or boolean masks (`kinds`), shape values (`shapes`), dtypes
and low-precision arithmetic (`precision`, `low_precision`), random draws (`rng`) and
resize calls (`resize_calls`)."""
