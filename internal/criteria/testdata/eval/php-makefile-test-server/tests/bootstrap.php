<?php

require __DIR__.'/../vendor/autoload.php';
