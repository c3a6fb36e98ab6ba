<?php

namespace GuzzleHttp;

function describe_type($input): string
{
    return \gettype($input);
}
