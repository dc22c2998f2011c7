"""Training for the models the app trains: the upscaler, the style network, the classifier."""
import torch

from serve import build_upscaler
from vapp.classifier import ResNet18
from vapp.style import TransformerNet


def fit(model, batches, lr=1e-4):
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    for inputs, targets in batches:
        loss = torch.nn.functional.l1_loss(model(inputs), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def main(batches):
    upscaler = build_upscaler(scale=2)
    fit(upscaler, batches["sr"])
    style = TransformerNet(width=8, blocks=2)
    fit(style, batches["style"])
    classifier = ResNet18()
    opt = torch.optim.SGD(classifier.parameters(), lr=0.1, momentum=0.9)
    for images, labels in batches["cls"]:
        loss = torch.nn.functional.cross_entropy(classifier(images), labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
