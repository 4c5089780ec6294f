"""The models the payload trains, all with a variable input shape."""
import math

import keras

from ssb_contract.options import MODELS

# Reference input side used to measure a model's activation size per pixel.
REFERENCE_SIDE = 224


def build(name, num_classes, input_shape=(None, None, 3)):
    """A classifier producing logits; global average pooling makes it shape-agnostic."""
    if name == 'smallcnn':
        inputs = keras.Input(input_shape)
        x = inputs
        for filters in (16, 32, 64):
            x = keras.layers.Conv2D(filters, 3, strides=2, padding='same', activation='relu')(x)
        features = keras.layers.GlobalAveragePooling2D()(x)
    elif name in ('resnet50', 'vgg16'):
        application = {'resnet50': keras.applications.ResNet50,
                       'vgg16': keras.applications.VGG16}[name]
        base = application(weights=None, include_top=False, pooling='avg',
                           input_shape=input_shape)
        inputs, features = base.input, base.output
    else:
        raise ValueError(f'unknown model {name!r}; choose from {", ".join(MODELS)}')
    outputs = keras.layers.Dense(num_classes, dtype='float32')(features)
    return keras.Model(inputs, outputs, name=name)


class MemoryModel:
    """Estimate of the memory one training step needs, from the model's own layers.

    Activation elements per input pixel are counted on a copy of the model built
    at a fixed reference size; training keeps each activation and its gradient,
    plus weights, gradients and two Adam moments, all float32.
    """

    def __init__(self, name, num_classes):
        reference = build(name, num_classes, (REFERENCE_SIDE, REFERENCE_SIDE, 3))
        elements = sum(math.prod(layer.output.shape[1:]) for layer in reference.layers)
        self.elements_per_pixel = elements / REFERENCE_SIDE ** 2
        self.parameters = reference.count_params()

    def training_bytes(self, batch, height, width):
        return 4 * (2 * self.elements_per_pixel * batch * height * width + 4 * self.parameters)
